// braid-info end to end: the text report has every section, --json parses and
// holds the same parts, --env lists every registered variable, and a
// described machine (BRAID_TOPO_FILE) shows up instead of this one.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "base/env.h"

namespace {

struct Result {
  int exitCode = -1;
  std::string out;
};

Result run(const std::string& args, const std::string& envPrefix = "") {
  Result r;
  std::string cmd = envPrefix + " " + BRAID_INFO_PATH + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(BraidInfo, TextReportHasEverySection) {
  Result r = run("", "env -u BRAID_TOPO_FILE");
  ASSERT_EQ(r.exitCode, 0);
  for (const char* part :
       {"braid 0.", "hwloc:", "topology:", "NUMA node", "nics:", "transports:", "tcp: ok",
        "ibverbs: ", "algorithms:", "allreduce:", "nccl net plugin: ", "braidMemAlloc: yes"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(BraidInfo, JsonParsesAndHoldsEveryPart) {
  Result r = run("--json", "env -u BRAID_TOPO_FILE");
  ASSERT_EQ(r.exitCode, 0);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  for (const char* key : {"version", "build", "topology", "process", "transports", "algorithms", "env"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_GE(j["version"]["code"].get<int>(), 100);
  EXPECT_GE(j["topology"]["cores"].size(), 1u);
  EXPECT_GE(j["topology"]["nics"].size(), 1u);
  bool tcpOk = false;
  for (const auto& t : j["transports"]) tcpOk |= t["name"] == "tcp" && t["status"] == "ok";
  EXPECT_TRUE(tcpOk) << j["transports"].dump();
  EXPECT_TRUE(j["algorithms"].contains("allreduce"));
}

// The CPUs a rank started here may use (ranks compare theirs at init): under
// taskset, the one CPU it was given.
TEST(BraidInfo, SaysWhichCpusThisProcessMayUse) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) last = c;
  ASSERT_GE(last, 0);
  const std::string pin = "env -u BRAID_TOPO_FILE taskset -c " + std::to_string(last);
  Result json = run("--json", pin);
  ASSERT_EQ(json.exitCode, 0) << "taskset missing? " << json.out;
  nlohmann::json j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.out;
  EXPECT_EQ(j["process"]["cpus"], std::to_string(last));
  Result text = run("", pin);
  EXPECT_NE(text.out.find("this process may run on cpus " + std::to_string(last) + "\n"), std::string::npos)
      << text.out;
}

TEST(BraidInfo, EnvListsEveryRegisteredVariable) {
  Result text = run("--env", "BRAID_CHUNK_BYTES=4096");
  ASSERT_EQ(text.exitCode, 0);
  for (const braid::env::Variable& v : braid::env::all())
    EXPECT_NE(text.out.find(v.name), std::string::npos) << v.name;
  EXPECT_NE(text.out.find("BRAID_CHUNK_BYTES = '4096'"), std::string::npos) << text.out;
  Result json = run("--env --json", "BRAID_CHUNK_BYTES=4096");
  nlohmann::json j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(j.is_array()) << json.out;
  EXPECT_EQ(j.size(), braid::env::all().size());
  int seen = 0;
  for (const auto& v : j) {
    if (v["name"] != "BRAID_CHUNK_BYTES") continue;
    EXPECT_EQ(v["value"], "4096");
    ++seen;
  }
  EXPECT_EQ(seen, 1);
}

TEST(BraidInfo, DescribedMachineReplacesThisOne) {
  Result r = run("--json", std::string("BRAID_TOPO_FILE=") + BRAID_TOPO_TEST_DATA + "/dgx_like.json");
  ASSERT_EQ(r.exitCode, 0);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["topology"]["gpus"].size(), 8u);
  Result text = run("", std::string("BRAID_TOPO_FILE=") + BRAID_TOPO_TEST_DATA + "/dgx_like.json");
  EXPECT_NE(text.out.find("closest NIC mlx5_3 (PIX)"), std::string::npos) << text.out;
  Result broken = run("", "BRAID_TOPO_FILE=/nonexistent.json");
  EXPECT_EQ(broken.exitCode, 0);  // the rest of the report is still useful
  EXPECT_NE(broken.out.find("unavailable: invalid argument: BRAID_TOPO_FILE"), std::string::npos) << broken.out;
}

TEST(BraidInfo, RejectsUnknownOptions) { EXPECT_NE(run("--no-such-flag").exitCode, 0); }

}  // namespace

// --tuner prints the model's table for the link parameters in force: at
// 100 Gbit/s and 5 us an 8 B all-reduce on 1024 ranks is latency-bound (rd,
// log2 N rounds), a 1 GiB one bandwidth-bound (not rd, which moves the whole
// vector every round).
TEST(BraidInfo, TunerTableFollowsTheLinkParameters) {
  Result r = run("--tuner --ranks 1024 --sizes 8,1g", "BRAID_LINK_ALPHA_US=5 BRAID_LINK_BETA_GBPS=12.5");
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_NE(r.out.find("alpha 5 us, beta 12.5 GB/s"), std::string::npos) << r.out;
  const size_t small = r.out.find("1024 ranks            8 B");
  const size_t big = r.out.find("1024 ranks   1073741824 B");
  ASSERT_NE(small, std::string::npos) << r.out;
  ASSERT_NE(big, std::string::npos) << r.out;
  EXPECT_EQ(r.out.compare(small + 25, 5, "  *rd"), 0) << r.out;
  EXPECT_NE(r.out.compare(big + 25, 5, "  *rd"), 0) << r.out;
  EXPECT_NE(r.out.find("rhd"), std::string::npos) << r.out;
}

TEST(BraidInfo, TunerTableRejectsBadArguments) {
  EXPECT_EQ(run("--tuner --collective allsum").exitCode, 2);
  EXPECT_EQ(run("--tuner --ranks 0").exitCode, 2);
  EXPECT_EQ(run("--tuner --ranks 4k").exitCode, 2);
  EXPECT_EQ(run("--tuner --sizes 1x").exitCode, 2);
  EXPECT_EQ(run("--tuner", "BRAID_LINK_BETA_GBPS=fast").exitCode, 2);
  Result off = run("--tuner", "BRAID_LINK_BETA_GBPS=0");
  EXPECT_EQ(off.exitCode, 0);
  EXPECT_NE(off.out.find("the cost model is off"), std::string::npos) << off.out;
}
