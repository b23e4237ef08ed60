// The core correctness matrix over the ibverbs transport (transport_matrix.h).
// This machine has no RDMA device, so the ranks' transports open the tests'
// fake libibverbs (tests/unit/transports/fake_verbs) with its fabric in shared
// memory: one RDMA fabric across the rank processes, data moved between them
// by process_vm_readv / writev. On an RDMA host the same test runs over the
// real libibverbs when BRAID_IB_LIBRARY is left unset outside.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "transport_matrix.h"

namespace braid::itest {
namespace {

class IbVerbs : public ::testing::TestWithParam<TransportShape> {
 protected:
  // A fabric of its own for each run; its shared memory goes when the run ends.
  void run(const MatrixOptions& m, const char* maxMessageBytes = nullptr) {
    static std::atomic<int> runs{0};
    const std::string fabric = "/braid-fake-verbs-" + std::to_string(getpid()) + "-" + std::to_string(runs++);
    runMatrixOver("ibverbs", GetParam(), m, [&](int) {
      setenv("BRAID_IB_LIBRARY", BRAID_FAKE_VERBS_PATH, 1);
      setenv("BRAID_FAKE_VERBS_FABRIC", fabric.c_str(), 1);
      setenv("BRAID_SOCKET_IFNAME", "lo", 1);
      if (maxMessageBytes) setenv("BRAID_MAX_MESSAGE_BYTES", maxMessageBytes, 1);
    });
    shm_unlink(fabric.c_str());
  }
};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(IbVerbs, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  run(m);
}

// The large count (many chunks, writes longer than the fake port's 256 KiB
// limit) for the representative subset.
TEST_P(IbVerbs, Big) {
  MatrixOptions m;
  m.counts = {};
  run(m);
}

// Transfers over BRAID_MAX_MESSAGE_BYTES go as several messages, cut alike at
// both ends (shm too, between the pretend hosts' own ranks). The transport's
// own limit (4 GiB - 1) would take buffers a test cannot spare; 4 KiB cuts
// every 4099-element case into pieces, the last one short.
TEST_P(IbVerbs, SmallInMessagesOf4KiB) {
  MatrixOptions m;
  m.bigCount = 0;
  run(m, "4096");
}

INSTANTIATE_TEST_SUITE_P(Shapes, IbVerbs, ::testing::Values(TransportShape{3, 0}, TransportShape{4, 2}),
                         [](const auto& p) { return shapeName("ibverbs", p.param); });

}  // namespace
}  // namespace braid::itest
