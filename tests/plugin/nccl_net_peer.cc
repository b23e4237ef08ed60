// The other process of the plugin tests: an NCCL rank of its own, with its own
// plugin instance and so its own secret.
//
//   nccl_net_peer V receive COUNT SIZE        prints its listen handle (hex), then
//                                             receives and checks COUNT messages
//   nccl_net_peer V send HANDLE COUNT SIZE    connects to HANDLE and sends them
//
// through the plugin's table ncclNetPlugin_vV.
// Message i is pattern(SIZE, i) with tag 7. Exit status 0 when every message
// arrived whole; a reason on stderr otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin_test_util.h"

using namespace braid::ncclnet::testing;

namespace {

constexpr int kTag = 7;

int fail(const std::string& why) {
  std::fprintf(stderr, "nccl_net_peer: %s (last warning: %s)\n", why.c_str(), lastWarning().c_str());
  return 1;
}

int receive(const NetApi& net, int count, size_t size) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  if (net.listen(0, handle, &listenComm) != ncclSuccess) return fail("listen failed");
  std::printf("%s\n", toHex(handle, sizeof(handle)).c_str());
  std::fflush(stdout);
  void* recvComm = nullptr;
  if (establish(net, nullptr, nullptr, listenComm, &recvComm, 20000) != ncclSuccess)
    return fail("accept failed");
  std::vector<std::vector<uint8_t>> bufs(count, std::vector<uint8_t>(size));
  std::vector<Op> ops(count);
  std::vector<Op*> pending;
  for (int i = 0; i < count; ++i) {
    void* data = bufs[i].data();
    size_t sz = size;
    int tag = kTag;
    if (net.irecv(recvComm, 1, &data, &sz, &tag, nullptr, &ops[i].request) != ncclSuccess)
      return fail("irecv failed");
    pending.push_back(&ops[i]);
  }
  if (!driveAll(net, pending)) return fail("receives did not finish");
  for (int i = 0; i < count; ++i) {
    if (ops[i].result != ncclSuccess) return fail("receive " + std::to_string(i) + " failed");
    if (ops[i].size != static_cast<int>(size))
      return fail("receive " + std::to_string(i) + " got " + std::to_string(ops[i].size) + " bytes");
    if (bufs[i] != pattern(size, i)) return fail("receive " + std::to_string(i) + " holds the wrong bytes");
  }
  net.closeRecv(recvComm);
  net.closeListen(listenComm);
  return 0;
}

int send(const NetApi& net, const std::string& hex, int count, size_t size) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (!fromHex(hex, handle, sizeof(handle))) return fail("bad handle text");
  void* sendComm = nullptr;
  if (ncclResult_t r = establish(net, handle, &sendComm, nullptr, nullptr, 20000); r != ncclSuccess)
    return fail("connect failed with " + std::to_string(r));
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<Op> ops(count);
  std::vector<Op*> pending;
  for (int i = 0; i < count; ++i) bufs.push_back(pattern(size, i));
  for (int i = 0; i < count; ++i) {
    if (net.isend(sendComm, bufs[i].data(), size, kTag, nullptr, &ops[i].request) != ncclSuccess)
      return fail("isend failed");
    pending.push_back(&ops[i]);
  }
  if (!driveAll(net, pending)) return fail("sends did not finish");
  for (int i = 0; i < count; ++i)
    if (ops[i].result != ncclSuccess) return fail("send " + std::to_string(i) + " failed");
  net.closeSend(sendComm);
  return 0;
}

}  // namespace

namespace {

int run(int argc, char** argv) {
  if (argc < 2) return fail("usage: nccl_net_peer V receive COUNT SIZE | V send HANDLE COUNT SIZE");
  std::string error;
  NetApi* net = loadPlugin(std::atoi(argv[1]), &error);
  if (!net) return fail(error);
  if (net->init(recordingLogger) != ncclSuccess) return fail("init failed");
  if (argc == 5 && std::strcmp(argv[2], "receive") == 0)
    return receive(*net, std::atoi(argv[3]), std::strtoul(argv[4], nullptr, 10));
  if (argc == 6 && std::strcmp(argv[2], "send") == 0)
    return send(*net, argv[3], std::atoi(argv[4]), std::strtoul(argv[5], nullptr, 10));
  return fail("usage: nccl_net_peer V receive COUNT SIZE | V send HANDLE COUNT SIZE");
}

}  // namespace

int main(int argc, char** argv) { return endProcess(run(argc, argv)); }
