// Detection on this box (a small VM: assert only what is certain), on hwloc's
// synthetic machines and on a /sys without PCI information, and that whatever
// is detected is itself a valid topology file.
#include <gtest/gtest.h>

#include "core/bootstrap/host_id.h"
#include "test_util.h"
#include "topo/detect.h"
#include "topo/print.h"
#include "topo/topo_file.h"

namespace braid::topo {
namespace {

using testing::ScopedEnv;
using testing::TempDir;

void expectCertainFacts(const HostTopology& h) {
  EXPECT_GE(h.packages.size(), 1u);
  EXPECT_GE(h.numaNodes.size(), 1u);
  EXPECT_GE(h.cores.size(), 1u);
  EXPECT_GE(h.puCount(), 1);
  bool haveNic = false;
  for (const Nic& n : h.nics) haveNic |= n.kind == NicKind::kNetdev && !n.name.empty();
  EXPECT_TRUE(haveNic) << "no netdev found, not even lo";
  EXPECT_EQ(h.hostId, bootstrap::localHostId());
  // What we detect must be a file we accept.
  std::vector<HostTopology> again;
  Status st = parseTopologyFile(formatTopologyFile({h}), &again);
  EXPECT_TRUE(st.isOk()) << st.message();
  EXPECT_FALSE(formatTree(h).empty());
}

TEST(TopoDetect, ThisHost) {
  ScopedEnv file("BRAID_TOPO_FILE", std::nullopt);
  HostTopology h;
  Status st = localTopology(&h);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(h.source, builtWithHwloc() ? "hwloc" : "sysfs");
  expectCertainFacts(h);
  EXPECT_GE(h.closestNicToNuma(h.numaNodes[0].id), 0);
}

TEST(TopoDetect, SysfsFallbackOnThisHost) {
  HostTopology h;
  ASSERT_TRUE(detectSysfs(&h).isOk());
  EXPECT_EQ(h.source, "sysfs");
  expectCertainFacts(h);
  // Both detectors agree on what they both see.
  HostTopology live;
  ASSERT_TRUE(detectTopology(&live).isOk());
  EXPECT_EQ(h.puCount(), live.puCount());
  EXPECT_EQ(h.numaNodes.size(), live.numaNodes.size());
}

TEST(TopoDetect, SysfsWithoutPciOrNumaInformation) {
  TempDir root;
  root.file("sys/devices/system/cpu/online", "0-3\n");
  HostTopology h;
  ASSERT_TRUE(detectSysfs(&h, root.path()).isOk());
  EXPECT_EQ(h.puCount(), 4);
  EXPECT_EQ(h.cores.size(), 4u);
  ASSERT_EQ(h.numaNodes.size(), 1u);
  EXPECT_EQ(h.numaNodes[0].cpus.toString(), "0-3");
  EXPECT_TRUE(h.pci.empty());
  EXPECT_TRUE(h.nics.empty());
  EXPECT_EQ(h.closestNicToNuma(0), -1);
  std::vector<HostTopology> again;
  EXPECT_TRUE(parseTopologyFile(formatTopologyFile({h}), &again).isOk());
}

TEST(TopoDetect, HwlocSyntheticMachineWithoutPci) {
  if (!builtWithHwloc()) {
    HostTopology h;
    EXPECT_EQ(detectHwloc(&h).code(), Code::kNotSupported);
    GTEST_SKIP() << "built without hwloc";
  }
  HostTopology h;
  Status st = detectHwloc(&h, {"pack:2 numa:1 l3:1 core:4 pu:2"});
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(h.packages.size(), 2u);
  EXPECT_EQ(h.numaNodes.size(), 2u);
  EXPECT_EQ(h.cores.size(), 8u);
  EXPECT_EQ(h.puCount(), 16);
  EXPECT_TRUE(h.pci.empty());
  EXPECT_TRUE(h.nics.empty());  // synthetic: this host's netdevs are not added
  EXPECT_EQ(h.closestNicToGpu(0), -1);
  for (const Core& c : h.cores) EXPECT_GE(c.numa, 0);
  int l3 = 0;
  for (const Cache& c : h.caches) l3 += c.level == 3;
  EXPECT_EQ(l3, 2);
  std::vector<HostTopology> again;
  EXPECT_TRUE(parseTopologyFile(formatTopologyFile({h}), &again).isOk());
  EXPECT_EQ(detectHwloc(&h, {"not a machine"}).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace braid::topo
