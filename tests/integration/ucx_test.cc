// The core correctness matrix over the UCX transport (transport_matrix.h).
// UCX here runs over TCP (the only fabric this machine has); the code path is
// the one InfiniBand and RoCE take, UCX choosing the wire underneath.
//
// Skips, saying so, where libucp cannot be loaded.
#include <gtest/gtest.h>

#include <string>

#include "harness.h"
#include "transport_matrix.h"

namespace braid::itest {
namespace {

class Ucx : public ::testing::TestWithParam<TransportShape> {
 protected:
  void SetUp() override {
    if (std::string why = ucxMissing(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(Ucx, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  runMatrixOver("ucx", GetParam(), m);
}

// The large count (rendezvous, many chunks) for the representative subset.
TEST_P(Ucx, Big) {
  MatrixOptions m;
  m.counts = {};
  runMatrixOver("ucx", GetParam(), m);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Ucx,
                         ::testing::Values(TransportShape{2, 0}, TransportShape{3, 0}, TransportShape{3, 2},
                                           TransportShape{4, 2}),
                         [](const auto& p) { return shapeName("ucx", p.param); });

}  // namespace
}  // namespace braid::itest
