// Queries on a machine this box is not: data/dgx_like.json has 2 sockets
// (NUMA 0, 1), 4 host bridges each with one PCIe switch holding two GPUs and
// one 400 Gb/s RDMA NIC (mlx5_0..3), plus eth0 and lo.
#include <gtest/gtest.h>

#include "test_util.h"
#include "topo/model.h"

namespace braid::topo {
namespace {

using testing::dgx;

int nicIndex(const HostTopology& h, const std::string& name) {
  for (size_t i = 0; i < h.nics.size(); ++i)
    if (h.nics[i].name == name) return static_cast<int>(i);
  return -1;
}

TEST(TopoModel, DescribedMachineHasWhatTheFileSays) {
  HostTopology h = dgx();
  EXPECT_EQ(h.packages.size(), 2u);
  EXPECT_EQ(h.numaNodes.size(), 2u);
  EXPECT_EQ(h.cores.size(), 64u);
  EXPECT_EQ(h.puCount(), 128);
  EXPECT_EQ(h.gpus.size(), 8u);
  EXPECT_EQ(h.nics.size(), 6u);
  EXPECT_EQ(h.numaDistance(0, 1), 21);
  EXPECT_EQ(h.numaDistance(1, 1), 10);
  // NUMA nodes of NICs and GPUs come from their host bridges when not given.
  EXPECT_EQ(h.nics[nicIndex(h, "mlx5_1")].numa, 0);
  EXPECT_EQ(h.nics[nicIndex(h, "mlx5_2")].numa, 1);
  EXPECT_EQ(h.gpus[7].numa, 1);
  EXPECT_EQ(h.numaOfCpus(CpuList({33, 97})), 1);
  EXPECT_EQ(h.numaOfCpus(CpuList({0, 32})), -1);
}

TEST(TopoModel, ClosestNicPerGpuIsTheOneOnItsSwitch) {
  HostTopology h = dgx();
  for (int g = 0; g < 8; ++g) {
    int nic = h.closestNicToGpu(g);
    ASSERT_GE(nic, 0);
    EXPECT_EQ(h.nics[nic].name, "mlx5_" + std::to_string(g / 2)) << h.gpus[g].name;
    EXPECT_EQ(h.pciPath(h.gpus[g].pci, h.nics[nic].pci), PathType::kPix);
  }
  EXPECT_EQ(h.closestNicToGpu(8), -1);
  EXPECT_EQ(h.closestNicToGpu(-1), -1);
}

TEST(TopoModel, PathTypesClimbTheLadder) {
  HostTopology h = dgx();
  auto gpu = [&](int g) { return h.gpus[g].pci; };
  EXPECT_EQ(h.pciPath(gpu(0), gpu(0)), PathType::kSame);
  EXPECT_EQ(h.pciPath(gpu(0), gpu(1)), PathType::kPix);   // same switch
  EXPECT_EQ(h.pciPath(gpu(0), gpu(2)), PathType::kNode);  // other host bridge, same socket
  EXPECT_EQ(h.pciPath(gpu(0), gpu(5)), PathType::kSys);   // other socket
  EXPECT_EQ(h.pciPath(gpu(0), "0000:01:00.0"), PathType::kNode);  // eth0 hangs off pci0000:00, also socket 0
  // A device right on GPU 0's host bridge, and one behind a second switch
  // level under GPU 1's downstream port.
  h.pci.push_back({"0000:15:01.0", "pci0000:15", PciKind::kDevice, 0x0200, 0x8086, 0x1572, -1, 0});
  h.pci.push_back({"0000:20:00.0", h.findPci(gpu(1))->parent, PciKind::kBridge, 0x0604, 0x1000, 0xc030, -1, 0});
  h.pci.push_back({"0000:21:00.0", "0000:20:00.0", PciKind::kDevice, 0x0200, 0x8086, 0x1572, -1, 0});
  EXPECT_EQ(h.pciPath(gpu(0), "0000:15:01.0"), PathType::kPhb);
  EXPECT_EQ(h.pciPath(gpu(0), "0000:21:00.0"), PathType::kPxb);
  EXPECT_EQ(h.pciNuma("0000:21:00.0"), 0);  // inherited from the host bridge
  EXPECT_EQ(h.pciPath(gpu(0), "no-such-device"), PathType::kSys);
  EXPECT_STREQ(pathTypeName(PathType::kPxb), "PXB");
}

TEST(TopoModel, ClosestNicPerNumaNodePrefersLocalRdma) {
  HostTopology h = dgx();
  EXPECT_EQ(h.nics[h.closestNicToNuma(0)].name, "mlx5_0");
  EXPECT_EQ(h.nics[h.closestNicToNuma(1)].name, "mlx5_2");
  // A NIC that is down is passed over.
  h.nics[nicIndex(h, "mlx5_2")].up = false;
  EXPECT_EQ(h.nics[h.closestNicToNuma(1)].name, "mlx5_3");
  EXPECT_EQ(h.numaNearNic(nicIndex(h, "mlx5_3")), std::vector<int>{1});
  EXPECT_EQ(h.numaNearNic(nicIndex(h, "lo")), (std::vector<int>{0, 1}));  // virtual: anywhere
}

TEST(TopoModel, OnlyVirtualNicsStillGiveAnAnswer) {
  HostTopology h = dgx();
  h.nics = {{"lo", NicKind::kNetdev, "", -1, 0, "", true}};
  EXPECT_EQ(h.closestNicToNuma(1), 0);
  EXPECT_EQ(h.closestNicToGpu(3), 0);  // no PCI NIC: falls back to the GPU's NUMA node
  h.nics.clear();
  EXPECT_EQ(h.closestNicToNuma(0), -1);
  EXPECT_EQ(h.closestNicToGpu(0), -1);
}

// The last-level cache as the slots' size choices read it: the largest
// data or unified cache of the deepest level, believed up to 32 MiB a PU.
TEST(TopoModel, LastLevelCacheIsTheDeepestBelievableOne) {
  HostTopology h;
  EXPECT_EQ(h.lastLevelCacheBytes(), 0u);
  constexpr uint64_t MiB = uint64_t{1} << 20;
  h.caches = {{1, "data", 48 << 10, CpuList({0})},
              {1, "instruction", 32 << 10, CpuList({0})},
              {2, "unified", 1 * MiB, CpuList({0})},
              {2, "unified", 1 * MiB, CpuList({1})}};
  EXPECT_EQ(h.lastLevelCacheBytes(), 1 * MiB);
  // A real complex: 96 MiB shared by 16 PUs, left as it is.
  h.caches.push_back(
      {3, "unified", 96 * MiB, CpuList({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})});
  EXPECT_EQ(h.lastLevelCacheBytes(), 96 * MiB);
  // A VM's vCPUs each shown the whole socket's L3 (the 2-core VM: 508 MiB).
  h.caches.pop_back();
  h.caches.push_back({3, "unified", 508 * MiB, CpuList({0})});
  h.caches.push_back({3, "unified", 508 * MiB, CpuList({1})});
  EXPECT_EQ(h.lastLevelCacheBytes(), 32 * MiB);
  EXPECT_EQ(h.reportedLastLevelCacheBytes(), 508 * MiB);
  // A cache whose PUs are unknown counts as one PU's.
  h.caches.push_back({3, "unified", 64 * MiB, CpuList()});
  EXPECT_EQ(h.lastLevelCacheBytes(), 32 * MiB);
  // An instruction cache is never the last level.
  h.caches.push_back({4, "instruction", 1024 * MiB, CpuList({0, 1})});
  EXPECT_EQ(h.lastLevelCacheBytes(), 32 * MiB);
}

}  // namespace
}  // namespace braid::topo
