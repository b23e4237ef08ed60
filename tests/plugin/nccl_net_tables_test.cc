// libnccl-net-braid.so's tables as NCCL's loader finds them, one version at a
// time: what each table leaves null (NCCL calls some entries unchecked),
// where each version's properties end, v11's per-communicator contexts, and
// what the version-specific entries refuse. The calls that every version
// shares are covered over NetApi by nccl_net_plugin_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "plugin_test_util.h"
#include "tests/common/socket_traffic_classes.h"

namespace braid::ncclnet::testing {
namespace {

constexpr int kTag = 7;

template <typename Table>
const Table& table(int version) {
  std::string error;
  const void* raw = rawTable(version, &error);
  if (!raw) ADD_FAILURE() << error;
  return *static_cast<const Table*>(raw);
}

// Calls connect and accept (lambdas over one table's entries) until each
// returned its comm, as NCCL does.
template <typename Connect, typename Accept>
::testing::AssertionResult establishWith(Connect connect, Accept accept, void** send, void** recv) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((!*send || !*recv) && std::chrono::steady_clock::now() < deadline) {
    if (!*send) {
      if (ncclResult_t r = connect(send); r != ncclSuccess)
        return ::testing::AssertionFailure() << "connect returned " << r << ": " << lastWarning();
    }
    if (!*recv) {
      if (ncclResult_t r = accept(recv); r != ncclSuccess)
        return ::testing::AssertionFailure() << "accept returned " << r << ": " << lastWarning();
    }
  }
  if (!*send || !*recv) return ::testing::AssertionFailure() << "not connected within 10 s";
  return ::testing::AssertionSuccess();
}

class NcclNetTables : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("BRAID_NCCL_NET", "tcp", 1);
    setenv("BRAID_SOCKET_IFNAME", "lo", 1);
    std::string error;
    for (int v = 8; v <= 11; ++v) ASSERT_NE(rawTable(v, &error), nullptr) << error;
    ASSERT_EQ(v8().init(recordingLogger), ncclSuccess) << lastWarning();
  }
  static const ncclNet_v8_t& v8() { return table<ncclNet_v8_t>(8); }
  static const ncclNet_v9_t& v9() { return table<ncclNet_v9_t>(9); }
  static const ncclNet_v10_t& v10() { return table<ncclNet_v10_t>(10); }
  static const ncclNet_v11_t& v11() { return table<ncclNet_v11_t>(11); }
};

// NCCL checks no entry for null when it loads a table, and calls all of
// these without looking; those for device offload it calls whenever they are
// set, and makeVDevice / setNetAttr only when set.
template <typename Table>
void expectEntriesNcclCalls(const Table& t) {
  EXPECT_STREQ(t.name, "braid");
  for (const void* entry :
       {(const void*)t.init, (const void*)t.devices, (const void*)t.getProperties, (const void*)t.listen,
        (const void*)t.connect, (const void*)t.accept, (const void*)t.regMr, (const void*)t.regMrDmaBuf,
        (const void*)t.deregMr, (const void*)t.isend, (const void*)t.irecv, (const void*)t.iflush,
        (const void*)t.test, (const void*)t.closeSend, (const void*)t.closeRecv, (const void*)t.closeListen})
    EXPECT_NE(entry, nullptr);
  EXPECT_EQ(t.getDeviceMr, nullptr);
  EXPECT_EQ(t.irecvConsumed, nullptr);
}

TEST_F(NcclNetTables, EveryVersionHasTheEntriesNcclCallsAndNoOffload) {
  expectEntriesNcclCalls(v8());
  expectEntriesNcclCalls(v9());
  expectEntriesNcclCalls(v10());
  expectEntriesNcclCalls(v11());
  EXPECT_EQ(v9().makeVDevice, nullptr);  // no virtual NICs
  EXPECT_EQ(v10().makeVDevice, nullptr);
  EXPECT_EQ(v11().makeVDevice, nullptr);
  EXPECT_NE(v11().finalize, nullptr);  // NCCL 2.28 calls it unchecked
  EXPECT_EQ(v11().setNetAttr, nullptr);
}

// Each version's getProperties fills its own struct and nothing past it (an
// older NCCL passes the smaller one), with the values v11's says.
TEST_F(NcclNetTables, PropertiesEndWhereTheirVersionEnds) {
  ncclNetProperties_v11_t want;
  ASSERT_EQ(v11().getProperties(0, &want), ncclSuccess);
  EXPECT_EQ(want.maxMultiRequestSize, 1);
  EXPECT_EQ(want.maxP2pBytes, size_t{1} << 30);

  alignas(8) unsigned char bytes[sizeof(ncclNetProperties_v11_t) + 16];
  auto untouchedFrom = [&](size_t from) {
    for (size_t i = from; i < sizeof(bytes); ++i)
      if (bytes[i] != 0xab) return false;
    return true;
  };
  std::memset(bytes, 0xab, sizeof(bytes));
  ASSERT_EQ(v8().getProperties(0, reinterpret_cast<ncclNetProperties_v8_t*>(bytes)), ncclSuccess);
  EXPECT_TRUE(untouchedFrom(sizeof(ncclNetProperties_v8_t)));
  const auto* p8 = reinterpret_cast<const ncclNetProperties_v8_t*>(bytes);
  EXPECT_STREQ(p8->name, want.name);
  EXPECT_EQ(p8->speed, want.speed);
  EXPECT_EQ(p8->maxComms, want.maxComms);
  EXPECT_EQ(p8->netDeviceVersion, want.netDeviceVersion);

  for (int version : {9, 10}) {
    std::memset(bytes, 0xab, sizeof(bytes));
    auto* p9 = reinterpret_cast<ncclNetProperties_v9_t*>(bytes);
    ASSERT_EQ(version == 9 ? v9().getProperties(0, p9) : v10().getProperties(0, p9), ncclSuccess);
    EXPECT_TRUE(untouchedFrom(sizeof(ncclNetProperties_v9_t))) << "v" << version;
    EXPECT_EQ(std::memcmp(p9, &want, sizeof(*p9)), 0) << "v" << version;
  }
  std::memset(bytes, 0xab, sizeof(bytes));
  ASSERT_EQ(v11().getProperties(0, reinterpret_cast<ncclNetProperties_v11_t*>(bytes)), ncclSuccess);
  EXPECT_TRUE(untouchedFrom(sizeof(ncclNetProperties_v11_t)));
}

// NCCL 2.28 calls init once per communicator and hands the context back to
// listen, connect and finalize; its config lives on NCCL's stack.
TEST_F(NcclNetTables, V11MakesAContextPerInitAndEndsItAtFinalize) {
  void* first = nullptr;
  void* second = nullptr;
  {
    ncclNetCommConfig_v11_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    ASSERT_EQ(v11().init(&first, 0x1234, &config, recordingLogger, nullptr), ncclSuccess);
    config.trafficClass = 5;
    ASSERT_EQ(v11().init(&second, 0x5678, &config, recordingLogger, nullptr), ncclSuccess);
  }
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(v11().init(nullptr, 1, nullptr, recordingLogger, nullptr), ncclInternalError);

  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  EXPECT_EQ(v11().listen(nullptr, 0, handle, &listen), ncclInternalError);
  EXPECT_EQ(listen, nullptr);
  EXPECT_NE(lastWarning().find("context"), std::string::npos) << lastWarning();
  ASSERT_EQ(v11().listen(first, 0, handle, &listen), ncclSuccess);
  void* send = nullptr;
  void* recv = nullptr;
  EXPECT_EQ(v11().connect(&send, 0, handle, &send, nullptr), ncclInternalError);  // not a context
  ASSERT_TRUE(establishWith([&](void** comm) { return v11().connect(second, 0, handle, comm, nullptr); },
                            [&](void** comm) { return v11().accept(listen, comm, nullptr); }, &send, &recv));

  EXPECT_EQ(v11().finalize(first), ncclSuccess);
  EXPECT_EQ(v11().finalize(first), ncclInternalError);  // already ended
  void* again = nullptr;
  EXPECT_EQ(v11().listen(first, 0, handle, &again), ncclInternalError);
  EXPECT_EQ(again, nullptr);

  // Comms outlive the context they were made under (NCCL may close them
  // after finalize); they still carry messages.
  std::vector<uint8_t> msg = pattern(5000, 3), got(5000);
  void* sendRequest = nullptr;
  void* recvRequest = nullptr;
  void* data = got.data();
  size_t size = got.size();
  int tag = kTag;
  void* phandles[1] = {nullptr};
  ASSERT_EQ(v11().irecv(recv, 1, &data, &size, &tag, nullptr, phandles, &recvRequest), ncclSuccess);
  ASSERT_EQ(v11().isend(send, msg.data(), msg.size(), kTag, nullptr, nullptr, &sendRequest), ncclSuccess);
  int sendDone = 0, recvDone = 0, recvSize = -1;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       !(sendDone && recvDone) && std::chrono::steady_clock::now() < deadline;) {
    if (!sendDone) {
      ASSERT_EQ(v11().test(sendRequest, &sendDone, nullptr), ncclSuccess);
    }
    if (!recvDone) {
      ASSERT_EQ(v11().test(recvRequest, &recvDone, &recvSize), ncclSuccess);
    }
  }
  ASSERT_TRUE(sendDone && recvDone);
  EXPECT_EQ(recvSize, 5000);
  EXPECT_EQ(got, msg);
  EXPECT_EQ(v11().closeSend(send), ncclSuccess);
  EXPECT_EQ(v11().closeRecv(recv), ncclSuccess);
  EXPECT_EQ(v11().closeListen(listen), ncclSuccess);
  EXPECT_EQ(v11().finalize(second), ncclSuccess);
}

// A v11 communicator's trafficClass marks the packets of the connections it
// makes. Connects go out through an endpoint per peer and class, so the same
// peer reached from a communicator without a class still gets the system's
// (BRAID_SOCKET_TC unset); a class outside a byte is refused.
TEST_F(NcclNetTables, V11ConnectsCarryTheirCommunicatorsTrafficClass) {
  constexpr int kClass = 0x68;  // DSCP 26 (AF31) << 2
  void* plain = nullptr;
  void* marked = nullptr;
  void* bad = nullptr;
  {
    ncclNetCommConfig_v11_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    ASSERT_EQ(v11().init(&plain, 1, &config, recordingLogger, nullptr), ncclSuccess);
    config.trafficClass = kClass;
    ASSERT_EQ(v11().init(&marked, 2, &config, recordingLogger, nullptr), ncclSuccess);
    config.trafficClass = 300;
    ASSERT_EQ(v11().init(&bad, 3, &config, recordingLogger, nullptr), ncclSuccess);
  }
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(v11().listen(plain, 0, handle, &listen), ncclSuccess);
  std::map<int, int> before = test::connectedTcpTrafficClasses();

  void* markedSend = nullptr;
  void* markedRecv = nullptr;
  ASSERT_TRUE(establishWith([&](void** comm) { return v11().connect(marked, 0, handle, comm, nullptr); },
                            [&](void** comm) { return v11().accept(listen, comm, nullptr); }, &markedSend,
                            &markedRecv));
  std::map<int, int> now = test::connectedTcpTrafficClasses();
  EXPECT_EQ(now[kClass] - before[kClass], 1) << "the connector's socket (1 to a peer on this host)";
  EXPECT_EQ(now[0] - before[0], 1) << "the acceptor's, whose listener has no class";

  void* plainSend = nullptr;
  void* plainRecv = nullptr;
  ASSERT_TRUE(establishWith([&](void** comm) { return v11().connect(plain, 0, handle, comm, nullptr); },
                            [&](void** comm) { return v11().accept(listen, comm, nullptr); }, &plainSend,
                            &plainRecv));
  std::map<int, int> after = test::connectedTcpTrafficClasses();
  EXPECT_EQ(after[kClass], now[kClass]) << "the unmarked communicator's connection is not marked";
  EXPECT_EQ(after[0] - now[0], 2);

  void* badSend = nullptr;
  EXPECT_NE(v11().connect(bad, 0, handle, &badSend, nullptr), ncclSuccess);
  EXPECT_EQ(badSend, nullptr);
  EXPECT_NE(lastWarning().find("traffic class 300"), std::string::npos) << lastWarning();

  for (void* send : {markedSend, plainSend}) EXPECT_EQ(v11().closeSend(send), ncclSuccess);
  for (void* recv : {markedRecv, plainRecv}) EXPECT_EQ(v11().closeRecv(recv), ncclSuccess);
  EXPECT_EQ(v11().closeListen(listen), ncclSuccess);
  for (void* ctx : {plain, marked, bad}) EXPECT_EQ(v11().finalize(ctx), ncclSuccess);
}

// NCCL's own probe of a v10 plugin (its GPU Direct check) connects with a
// null config.
TEST_F(NcclNetTables, V10ConnectsWithTheNullConfigOfNcclsProbes) {
  ASSERT_EQ(v10().init(recordingLogger, nullptr), ncclSuccess);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(v10().listen(0, handle, &listen), ncclSuccess);
  void* send = nullptr;
  void* recv = nullptr;
  ASSERT_TRUE(establishWith([&](void** comm) { return v10().connect(0, nullptr, handle, comm, nullptr); },
                            [&](void** comm) { return v10().accept(listen, comm, nullptr); }, &send, &recv));
  EXPECT_EQ(v10().closeSend(send), ncclSuccess);
  EXPECT_EQ(v10().closeRecv(recv), ncclSuccess);
  EXPECT_EQ(v10().closeListen(listen), ncclSuccess);
}

// v8's sizes are int: a negative one is refused, not taken as 2^64 - 1.
TEST_F(NcclNetTables, V8RefusesNegativeSizes) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(v8().listen(0, handle, &listen), ncclSuccess);
  void* send = nullptr;
  void* recv = nullptr;
  ASSERT_TRUE(establishWith([&](void** comm) { return v8().connect(0, handle, comm, nullptr); },
                            [&](void** comm) { return v8().accept(listen, comm, nullptr); }, &send, &recv));
  std::vector<uint8_t> buf(64);
  void* request = nullptr;
  EXPECT_EQ(v8().isend(send, buf.data(), -1, kTag, nullptr, &request), ncclInternalError);
  EXPECT_NE(lastWarning().find("negative size"), std::string::npos) << lastWarning();
  void* data = buf.data();
  int size = -1, tag = kTag;
  EXPECT_EQ(v8().irecv(recv, 1, &data, &size, &tag, nullptr, &request), ncclInternalError);
  EXPECT_NE(lastWarning().find("negative size"), std::string::npos) << lastWarning();
  EXPECT_EQ(request, nullptr);
  void* mr = nullptr;
  EXPECT_EQ(v8().regMrDmaBuf(send, buf.data(), buf.size(), NCCL_PTR_HOST, 0, 3, &mr), ncclInternalError);
  EXPECT_EQ(mr, nullptr);
  EXPECT_EQ(v8().closeSend(send), ncclSuccess);
  EXPECT_EQ(v8().closeRecv(recv), ncclSuccess);
  EXPECT_EQ(v8().closeListen(listen), ncclSuccess);
}

}  // namespace
}  // namespace braid::ncclnet::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return braid::ncclnet::testing::endProcess(RUN_ALL_TESTS());
}
