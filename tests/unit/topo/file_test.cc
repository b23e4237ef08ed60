// Topology files: round trips, host selection, and refusal of anything that
// is not a valid format-1 description, with a message naming the place.
#include <gtest/gtest.h>

#include <random>

#include "core/bootstrap/host_id.h"
#include "test_util.h"
#include "topo/detect.h"
#include "topo/topo_file.h"

namespace braid::topo {
namespace {

using testing::dataPath;
using testing::dgx;
using testing::readFile;
using testing::ScopedEnv;
using testing::TempDir;

TEST(TopoFile, RoundTripKeepsEverything) {
  HostTopology h = dgx();
  std::string text = formatTopologyFile({h});
  std::vector<HostTopology> again;
  Status st = parseTopologyFile(text, &again);
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(formatTopologyFile(again), text);
  EXPECT_EQ(again[0].gpus.size(), 8u);
  EXPECT_EQ(again[0].pci.size(), h.pci.size());

  TempDir dir;
  std::string path = dir.path() + "/saved.json";
  ASSERT_TRUE(saveTopologyFile(path, h).isOk());
  HostTopology loaded;
  ASSERT_TRUE(loadTopologyFile(path, "whatever", &loaded).isOk());
  EXPECT_EQ(loaded.source, "file:" + path);
  loaded.source = h.source;
  EXPECT_EQ(formatTopologyFile({loaded}), formatTopologyFile({h}));
}

TEST(TopoFile, SeveralHostsSelectByHostId) {
  HostTopology a = dgx(), b = dgx();
  a.hostId = "nodeA", b.hostId = "nodeB";
  b.gpus.resize(2);
  TempDir dir;
  std::string path = dir.file("cluster.json", formatTopologyFile({a, b}));
  HostTopology got;
  ASSERT_TRUE(loadTopologyFile(path, "nodeB", &got).isOk());
  EXPECT_EQ(got.gpus.size(), 2u);
  Status st = loadTopologyFile(path, "nodeC", &got);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("nodeA, nodeB"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("BRAID_HOSTID"), std::string::npos) << st.message();
}

TEST(TopoFile, EnvironmentLoadsAndDumps) {
  TempDir dir;
  std::string dump = dir.path() + "/dump.json";
  ScopedEnv file("BRAID_TOPO_FILE", dataPath("dgx_like.json"));
  ScopedEnv out("BRAID_TOPO_DUMP_FILE", dump);
  HostTopology h;
  ASSERT_TRUE(localTopology(&h).isOk());
  EXPECT_EQ(h.gpus.size(), 8u);
  std::vector<HostTopology> dumped;
  ASSERT_TRUE(parseTopologyFile(readFile(dump), &dumped).isOk());
  EXPECT_EQ(dumped[0].nics.size(), 6u);
}

TEST(TopoFile, MissingFileIsAClearError) {
  ScopedEnv file("BRAID_TOPO_FILE", std::string("/nonexistent/topo.json"));
  HostTopology h;
  Status st = localTopology(&h);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("BRAID_TOPO_FILE"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("/nonexistent/topo.json"), std::string::npos) << st.message();
}

// Replaces the first occurrence of `from` in the checked-in file.
std::string edited(const std::string& from, const std::string& to) {
  std::string text = readFile(dataPath("dgx_like.json"));
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(TopoFile, GarbageIsRefusedNamingThePlace) {
  struct Case {
    std::string text, expect;
  };
  std::vector<Case> cases = {
      {"", "not valid JSON"},
      {"\x7f" "ELF\x02\x01", "not valid JSON"},
      {"[1,2,3]", "expected an object"},
      {R"({"format":"braid-topology","version":2,"hosts":[]})", "version"},
      {R"({"format":"hwloc","version":1,"hosts":[]})", "is this a braid topology file"},
      {R"({"format":"braid-topology","version":1,"hosts":[]})", "at least one host"},
      {std::string(100, '[') + std::string(100, ']'), "nested deeper"},
      {edited("\"numa\":0}", "\"numa\":7}"), "no NUMA node with id 7"},
      {edited("\"cpus\":\"0-31,64-95\"", "\"cpus\":\"0-31,x\""), "hosts[0].packages[0].cpus"},
      {edited("\"kind\":\"rdma\"", "\"kind\":\"ethernet\""), "hosts[0].nics[2].kind"},
      {edited("\"pci\":\"0000:1a:00.0\"", "\"pci\":\"0000:ff:00.0\""), "not a PCI device entry"},
      {edited("\"parent\":\"pci0000:00\"", "\"parent\":\"0000:01:00.0\""), "not an earlier pci entry"},
      {edited("\"hostname\"", "\"hostnmae\""), "hosts[0].hostnmae: unknown key"},
      {edited("[21,10]", "[21]"), "numaDistances"},
      {edited("\"level\":3", "\"level\":\"3\""), "expected an integer"},
      {edited("\"vendor\":\"0x8086\"", "\"vendor\":\"8086\""), "hex number"},
      {edited("{\"id\":1,\"cpus\"", "{\"id\":0,\"cpus\""), "duplicate package id 0"},
  };
  for (const Case& c : cases) {
    std::vector<HostTopology> hosts;
    Status st = parseTopologyFile(c.text, &hosts);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << c.expect;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << "wanted '" << c.expect << "' in: " << st.message();
  }
}

TEST(TopoFile, TruncatedOrCorruptedFilesNeverCrash) {
  std::string text = readFile(dataPath("dgx_like.json"));
  std::vector<HostTopology> hosts;
  for (size_t n = 0; n < text.size(); n += 7)
    EXPECT_FALSE(parseTopologyFile(text.substr(0, n), &hosts).isOk()) << n;
  std::mt19937 rng(42);
  const std::string alphabet = "{}[]\",:-0123456789abcxyz \n\x01\xff";
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string mutated = text;
    for (int k = 0; k < 3; ++k) mutated[rng() % mutated.size()] = alphabet[rng() % alphabet.size()];
    Status st = parseTopologyFile(mutated, &hosts);
    if (st.isOk()) {
      ++accepted;  // e.g. a digit inside a size changed: still valid
    } else {
      EXPECT_EQ(st.code(), Code::kInvalidArgument);
    }
  }
  EXPECT_LT(accepted, 2000);
}

}  // namespace
}  // namespace braid::topo
