// What the netplugin transport adds to a plugin: the connector's proof of the
// secret. A stranger that reaches the listener through the plugin itself
// (which anyone on the network can) and sends garbage, a proof for another
// listener or a replayed proof, or nothing at all, is never accepted, and the
// genuine connector still is. The plugin is braid's own, over tcp on lo.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "tcp_test_util.h"
#include "transports/netplugin/connector_proof.h"
#include "transports/netplugin/netplugin_listen.h"
#include "transports/netplugin/plugin_library.h"

namespace braid::netplugin {
namespace {

using transport::Handle;
using transport::testing::tcpOptions;

TEST(ConnectorProof, ProvesTheSecretForOneListenerOnly) {
  transport::Secret secret = tcpOptions(1, 1).secret, other = tcpOptions(1, 2).secret;
  Handle mine, theirs;
  mine.bytes[0] = 1;
  theirs.bytes[0] = 2;
  uint8_t proof[kProofBytes];
  ASSERT_TRUE(makeProof(secret, mine, 42, proof).isOk());
  uint64_t id = 0, nonce = 0;
  ASSERT_TRUE(checkProof(secret, mine, proof, &id, &nonce).isOk());
  EXPECT_EQ(id, 42u);
  EXPECT_EQ(checkProof(other, mine, proof, &id, &nonce).code(), Code::kRemoteError);
  EXPECT_EQ(checkProof(secret, theirs, proof, &id, &nonce).code(), Code::kRemoteError);
  for (size_t i = 0; i < kProofBytes; ++i) {  // any byte changed breaks it
    uint8_t bad[kProofBytes];
    std::memcpy(bad, proof, kProofBytes);
    bad[i] ^= 0x10;
    EXPECT_FALSE(checkProof(secret, mine, bad, &id, &nonce).isOk()) << "byte " << i;
  }
  uint8_t again[kProofBytes];
  ASSERT_TRUE(makeProof(secret, mine, 42, again).isOk());
  EXPECT_NE(std::memcmp(proof, again, kProofBytes), 0) << "a fresh proof reuses the nonce";
}

class NetPluginStrangers : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("BRAID_NET_PLUGIN", BRAID_NCCL_NET_PLUGIN_PATH, 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
    transport::Options o = tcpOptions(1, 1, /*handshakeTimeoutMs=*/300);
    Status st = transport::createTransport("netplugin", o, &listener_);
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(transport::createTransport("netplugin", o, &connector_).isOk());
    ASSERT_TRUE(listener_->listen(0, &handle_, &listen_).isOk());
    const PluginLibrary* lib = nullptr;
    ASSERT_TRUE(PluginLibrary::open(BRAID_NCCL_NET_PLUGIN_PATH, &lib).isOk());
    net_ = &lib->net();
  }
  void TearDown() override {
    for (void* s : strangers_) net_->closeSend(s);
  }

  // A raw plugin connection to the listener that sends `first` (`size` bytes)
  // as its first message, as a stranger can. Drives the listener meanwhile.
  // Unless the sender is genuine, waits until the listener has closed the
  // connection: the stranger's further sends fail.
  void strangerSends(const void* first, int size, bool genuine = false) {
    void* send = nullptr;
    ASSERT_NO_FATAL_FAILURE(strangerConnects(&send));
    Deadline deadline(5000);
    void* req = nullptr;
    ASSERT_EQ(net_->isend(send, const_cast<void*>(first), size, 0, nullptr, &req), ncclSuccess);
    int done = 0;
    while (!done && !deadline.expired()) {
      ASSERT_EQ(net_->test(req, &done, nullptr), ncclSuccess);
      driveAccept();
    }
    if (!genuine) expectClosedByListener(send);
  }
  // Sends until one fails, driving the listener: it closed the connection.
  void expectClosedByListener(void* send) {
    static uint8_t byte = 0;
    Deadline deadline(5000);
    while (!deadline.expired()) {
      driveAccept();
      void* req = nullptr;
      if (net_->isend(send, &byte, 1, 0, nullptr, &req) != ncclSuccess) return;
      int done = 0;
      while (!done) {
        if (net_->test(req, &done, nullptr) != ncclSuccess) return;
        driveAccept();
      }
    }
    FAIL() << "the listener kept the stranger's connection open";
  }
  // A raw plugin connection to the listener, driving the listener meanwhile.
  void strangerConnects(void** send) {
    *send = nullptr;
    Deadline deadline(5000);
    while (!*send && !deadline.expired()) {
      ASSERT_EQ(net_->connect(0, handle_.bytes.data(), send), ncclSuccess);
      driveAccept();
    }
    ASSERT_NE(*send, nullptr);
    strangers_.push_back(*send);
  }
  // One accept() on the listener; what it accepts is kept in accepted_.
  void driveAccept() {
    std::unique_ptr<transport::RecvComm> r;
    uint64_t id = 0;
    ASSERT_TRUE(listener_->accept(*listen_, &r, &id).isOk());
    if (r) accepted_.push_back(std::move(r));
  }
  void acceptNothing() {
    for (int i = 0; i < 20; ++i) driveAccept();
    ASSERT_TRUE(accepted_.empty()) << "a stranger was accepted";
  }
  // The genuine connector still gets through, and its data too.
  void genuineStillConnects() {
    std::unique_ptr<transport::SendComm> s;
    std::unique_ptr<transport::RecvComm> r;
    uint64_t id = 0;
    Status st = transport::testing::connectVia(*connector_, *listener_, *listen_, handle_, 7, &s, &r, &id);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(id, 7u);
  }

  std::unique_ptr<transport::Transport> listener_, connector_;
  std::unique_ptr<transport::ListenComm> listen_;
  Handle handle_;
  const NetApi* net_ = nullptr;
  std::vector<void*> strangers_;
  std::vector<std::unique_ptr<transport::RecvComm>> accepted_;
};

TEST_F(NetPluginStrangers, GarbageIsNeverAccepted) {
  uint8_t garbage[kProofBytes];
  for (size_t i = 0; i < kProofBytes; ++i) garbage[i] = static_cast<uint8_t>(i * 13 + 5);
  strangerSends(garbage, kProofBytes);
  uint8_t big[1000] = {};
  strangerSends(big, sizeof(big));  // more than a proof: the receive fails
  strangerSends(garbage, 3);        // less than a proof
  acceptNothing();
  genuineStillConnects();
}

TEST_F(NetPluginStrangers, AProofForAnotherListenerOrReplayedIsRefused) {
  Handle elsewhere = handle_;
  elsewhere.bytes[40] ^= 1;
  uint8_t proof[kProofBytes];
  ASSERT_TRUE(makeProof(tcpOptions(1, 1).secret, elsewhere, 9, proof).isOk());
  strangerSends(proof, kProofBytes);
  acceptNothing();
  // A valid proof, seen once on the wire, sent again: the first use is
  // accepted (it was genuine), the replay is not.
  ASSERT_TRUE(makeProof(tcpOptions(1, 1).secret, handle_, 9, proof).isOk());
  strangerSends(proof, kProofBytes, /*genuine=*/true);
  Deadline deadline(5000);
  while (accepted_.empty() && !deadline.expired()) driveAccept();
  ASSERT_EQ(accepted_.size(), 1u) << "the genuine proof was not accepted";
  accepted_.clear();
  strangerSends(proof, kProofBytes);
  acceptNothing();
  genuineStillConnects();
}

// A stranger that connects and sends nothing holds no slot past the
// handshake deadline (300 ms here).
TEST_F(NetPluginStrangers, SilenceIsDroppedAtTheDeadline) {
  void* send = nullptr;
  ASSERT_NO_FATAL_FAILURE(strangerConnects(&send));
  Deadline deadline(5000);
  auto* listener = dynamic_cast<NetPluginListenComm*>(listen_.get());
  ASSERT_NE(listener, nullptr);
  while (listener->unproven() == 0 && !deadline.expired()) driveAccept();
  ASSERT_EQ(listener->unproven(), 1u) << "the plugin never handed the connection over";
  Deadline past(5000);
  while (listener->unproven() > 0 && !past.expired()) driveAccept();
  EXPECT_EQ(listener->unproven(), 0u) << "the silent stranger outlived the 300 ms handshake deadline";
  EXPECT_TRUE(accepted_.empty()) << "a silent stranger was accepted";
  expectClosedByListener(send);
  genuineStillConnects();
}

// braid takes the newest table a plugin exports, as NCCL does, unless
// BRAID_NET_PLUGIN_VERSION names one; a version outside 8..11 is refused.
TEST(NetApi, TakesTheNewestTableOrTheOneAskedFor) {
  void* lib = dlopen(BRAID_NCCL_NET_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  NetApi api;
  ASSERT_TRUE(NetApi::find(lib, "braid", 0, &api).isOk());
  EXPECT_EQ(api.version(), 11);
  EXPECT_STREQ(api.name(), "braid");
  for (int v = NetApi::kOldestVersion; v <= NetApi::kNewestVersion; ++v) {
    Status st = NetApi::find(lib, "braid", v, &api);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(api.version(), v);
  }
  for (int64_t v : {int64_t{7}, int64_t{12}, int64_t{-1}, (int64_t{1} << 32) + 8})
    EXPECT_EQ(NetApi::find(lib, "braid", v, &api).code(), Code::kInvalidArgument) << v;
  // A library without any table: the program itself (the plugin was opened
  // RTLD_LOCAL, so its symbols are not found through it).
  void* self = dlopen(nullptr, RTLD_NOW);
  Status none = NetApi::find(self, "this program", 0, &api);
  EXPECT_EQ(none.code(), Code::kNotSupported);
  EXPECT_NE(none.message().find("no ncclNetPlugin_v11 to v8"), std::string::npos) << none.message();
  dlclose(self);
  dlclose(lib);
}

// A table that leaves null an entry braid (or NCCL) calls is refused by
// name, not skipped: the variable picks another of the plugin's tables.
TEST(NetApi, RefusesAnIncompleteTableAndTakesAnotherWhenAskedTo) {
  void* lib = dlopen(BRAID_ODD_NETPLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  NetApi api;
  ASSERT_TRUE(NetApi::find(lib, "odd", 9, &api).isOk());
  Status incomplete = NetApi::find(lib, "odd", 0, &api);
  EXPECT_EQ(incomplete.code(), Code::kNotSupported);
  EXPECT_NE(incomplete.message().find("ncclNetPlugin_v11 leaves an entry braid calls null"),
            std::string::npos)
      << incomplete.message();
  EXPECT_EQ(api.version(), 9) << "a refused table replaced the one found before";
  Status missing = NetApi::find(lib, "odd", 10, &api);
  EXPECT_EQ(missing.code(), Code::kNotSupported);
  EXPECT_NE(missing.message().find("has no ncclNetPlugin_v10"), std::string::npos) << missing.message();
  dlclose(lib);
}

// The library is opened once per spec; each spec below names the same file
// by another path, so each open looks at BRAID_NET_PLUGIN_VERSION afresh.
TEST(NetApi, PluginLibraryTakesTheVersionFromTheEnvironment) {
  const std::string path = BRAID_NCCL_NET_PLUGIN_PATH;
  const std::string dir = path.substr(0, path.rfind('/')), file = path.substr(path.rfind('/'));
  setenv("BRAID_SOCKET_IFNAME", "lo", 1);
  const PluginLibrary* lib = nullptr;
  setenv("BRAID_NET_PLUGIN_VERSION", "9", 1);
  Status st = PluginLibrary::open(dir + "/." + file, &lib);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(lib->net().version(), 9);
  EXPECT_NE(lib->describe().find("NCCL net API v9"), std::string::npos) << lib->describe();
  setenv("BRAID_NET_PLUGIN_VERSION", "7", 1);
  EXPECT_EQ(PluginLibrary::open(dir + "/./." + file, &lib).code(), Code::kInvalidArgument);
  setenv("BRAID_NET_PLUGIN_VERSION", "v10", 1);
  EXPECT_EQ(PluginLibrary::open(dir + "/././." + file, &lib).code(), Code::kInvalidArgument);
  unsetenv("BRAID_NET_PLUGIN_VERSION");
  ASSERT_TRUE(PluginLibrary::open(dir + "/./././." + file, &lib).isOk());
  EXPECT_EQ(lib->net().version(), 11);
}

// Through libbraid_reshaped_netplugin.so (braid's plugin with a GPU-only
// device first and another maxP2pBytes); each case names the library by
// another path, so the plugin is initialised afresh with its variables.
class ReshapedPlugin : public ::testing::Test {
 protected:
  Status create(const char* maxP2pBytes, std::unique_ptr<transport::Transport>* out,
                bool stagedConnect = false) {
    const std::string path = BRAID_RESHAPED_NETPLUGIN_PATH;
    std::string spelled = path.substr(0, path.rfind('/'));
    for (int i = 0; i <= opened_; ++i) spelled += "/.";
    ++opened_;
    setenv("BRAID_NET_PLUGIN", spelled.append(path.substr(path.rfind('/'))).c_str(), 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
    setenv("BRAID_TEST_PLUGIN_MAX_P2P_BYTES", maxP2pBytes, 1);
    setenv("BRAID_TEST_PLUGIN_GPU_DEVICE_FIRST", "1", 1);
    setenv("BRAID_TEST_PLUGIN_STAGED_CONNECT", stagedConnect ? "1" : "0", 1);
    return transport::createTransport("netplugin", tcpOptions(1, 1), out);
  }
  static int opened_;
};
int ReshapedPlugin::opened_ = 0;

TEST_F(ReshapedPlugin, TheLimitIsTheDevicesAndItsNumberThePlugins) {
  std::unique_ptr<transport::Transport> t;
  Status st = create("5000", &t);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(t->capabilities().maxMessageBytes, 5000u);
  transport::DeviceProperties props;
  ASSERT_TRUE(t->deviceProperties(0, &props).isOk());
  EXPECT_NE(props.name, "gpu-only");
  // The plugin refuses to listen on its device 0, the GPU-only one.
  Handle h;
  std::unique_ptr<transport::ListenComm> listen;
  st = t->listen(0, &h, &listen);
  EXPECT_TRUE(st.isOk()) << st.message();
}

// The plugin writes its connect's stage into the handle it is given: braid
// hands every call of one connect the same handle, and proves the secret
// over the listener's bytes, not the plugin's marks.
TEST_F(ReshapedPlugin, AConnectThatKeepsItsStageInTheHandleGetsThrough) {
  std::unique_ptr<transport::Transport> listener, connector;
  Status st = create("0", &listener, /*stagedConnect=*/true);
  ASSERT_TRUE(st.isOk()) << st.message();
  st = transport::createTransport("netplugin", tcpOptions(1, 1), &connector);
  ASSERT_TRUE(st.isOk()) << st.message();
  Handle h;
  std::unique_ptr<transport::ListenComm> listen;
  ASSERT_TRUE(listener->listen(0, &h, &listen).isOk());
  std::unique_ptr<transport::SendComm> s;
  std::unique_ptr<transport::RecvComm> r;
  uint64_t id = 0;
  st = transport::testing::connectVia(*connector, *listener, *listen, h, 9, &s, &r, &id);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(id, 9u);
  EXPECT_EQ(h.bytes.back(), 0) << "the caller's handle was marked";
}

TEST_F(ReshapedPlugin, ALimitOver1GiBIsCutTo1GiB) {
  std::unique_ptr<transport::Transport> t;
  Status st = create("4294967296", &t);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(t->capabilities().maxMessageBytes, size_t{1} << 30);
}

TEST_F(ReshapedPlugin, ALimitUnderAPageOrOver1TiBIsRefusedNamingIt) {
  for (const char* bad : {"4095", "1", "1099511627777"}) {
    std::unique_ptr<transport::Transport> t;
    Status st = create(bad, &t);
    EXPECT_EQ(st.code(), Code::kNotSupported) << bad;
    EXPECT_NE(st.message().find(std::string("maxP2pBytes ") + bad), std::string::npos) << st.message();
    EXPECT_EQ(t, nullptr);
  }
}

}  // namespace
}  // namespace braid::netplugin
