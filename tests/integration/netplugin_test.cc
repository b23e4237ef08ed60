// The core correctness matrix through an NCCL net plugin (the netplugin
// transport, transport_matrix.h): braid's own plugin, libnccl-net-braid.so,
// which runs over tcp on lo. The same path carries braid over a vendor's
// plugin (EFA, InfiniBand), with BRAID_NET_PLUGIN naming that one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "transport_matrix.h"

namespace braid::itest {
namespace {

void usePlugin(int /*rank*/) {
  setenv("BRAID_NET_PLUGIN", BRAID_NCCL_NET_PLUGIN_PATH, 1);
  setenv("BRAID_SOCKET_IFNAME", "lo", 1);
}

class NetPlugin : public ::testing::TestWithParam<TransportShape> {};

// Counts 0, 1, 7 and 4099 for every dtype x op x collective, in and out of place.
TEST_P(NetPlugin, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  runMatrixOver("netplugin", GetParam(), m, usePlugin);
}

// The large count (many chunks) for the representative subset.
TEST_P(NetPlugin, Big) {
  MatrixOptions m;
  m.counts = {};
  runMatrixOver("netplugin", GetParam(), m, usePlugin);
}

// Transfers over BRAID_MAX_MESSAGE_BYTES go as several messages (the
// plugin's own 1 GiB would take buffers a test cannot spare).
TEST_P(NetPlugin, SmallInMessagesOf4KiB) {
  MatrixOptions m;
  m.bigCount = 0;
  runMatrixOver("netplugin", GetParam(), m, [](int rank) {
    usePlugin(rank);
    setenv("BRAID_MAX_MESSAGE_BYTES", "4096", 1);
  });
}

// Through a plugin that describes its devices as other vendors' do
// (libbraid_reshaped_netplugin.so, braid's plugin underneath):
// - each rank's device takes a different largest message (4096 + 1000 x
//   rank bytes, so pieces end mid-element), and the plugin fails any message
//   over its own: each pair must cut at the smaller of its two ends' limits,
//   exchanged at init;
// - its first device takes GPU memory only, so braid's device 0 is the
//   plugin's device 1, the number the plugin must be handed.
TEST_P(NetPlugin, SmallThroughAPluginWithOtherLimitsAndDevices) {
  MatrixOptions m;
  m.bigCount = 0;
  runMatrixOver("netplugin", GetParam(), m, [](int rank) {
    usePlugin(rank);
    setenv("BRAID_NET_PLUGIN", BRAID_RESHAPED_NETPLUGIN_PATH, 1);
    setenv("BRAID_TEST_PLUGIN_MAX_P2P_BYTES", std::to_string(4096 + 1000 * rank).c_str(), 1);
    setenv("BRAID_TEST_PLUGIN_GPU_DEVICE_FIRST", "1", 1);
  });
}

// The tests above take the plugin's newest table (v11, NCCL 2.28's); this one
// the oldest braid loads (v8, whose sizes are int), which NetApi adapts.
TEST(NetPluginOldestTable, Small) {
  MatrixOptions m;
  m.bigCount = 0;
  runMatrixOver("netplugin", TransportShape{3, 0}, m, [](int rank) {
    usePlugin(rank);
    setenv("BRAID_NET_PLUGIN_VERSION", "8", 1);
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, NetPlugin, ::testing::Values(TransportShape{3, 0}, TransportShape{4, 2}),
                         [](const auto& p) { return shapeName("netplugin", p.param); });

}  // namespace
}  // namespace braid::itest
