// Strangers at the rendezvous, and a rank that never comes.
//
// The unique id is opaque, so the root's address is found the way an attacker
// on the host would: the TCP sockets this process listens on (its fds matched
// against /proc/net/tcp{,6}) right after braidGetUniqueId, before any rank has
// joined. Every stranger then connects to every such listener before the
// genuine ranks get the id, so the root meets them first:
//   - one connects and stays silent until the test ends,
//   - one sends random bytes,
//   - a sidecar process runs braidCommInitFromEnv as rank 1 with the right
//     address but a wrong BRAID_SECRET, and must be refused.
// The genuine 3 ranks must then form the communicator and all-reduce correctly.
#include <arpa/inet.h>
#include <braid/braid.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <semaphore.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "checks.h"
#include "data.h"
#include "harness.h"

namespace braid::itest {
namespace {

struct Listener {
  int family;
  std::string host;  // numeric, loopback when the socket listens on any address
  int port;
};

std::set<unsigned long> mySocketInodes() {
  std::set<unsigned long> inodes;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return inodes;
  while (dirent* e = readdir(dir)) {
    char target[64] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(path.c_str(), target, sizeof target - 1) > 0 && strncmp(target, "socket:[", 8) == 0)
      inodes.insert(strtoul(target + 8, nullptr, 10));
  }
  closedir(dir);
  return inodes;
}

std::vector<Listener> myTcpListeners() {
  const std::set<unsigned long> inodes = mySocketInodes();
  std::vector<Listener> out;
  for (int family : {AF_INET, AF_INET6}) {
    std::ifstream f(family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6");
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
      std::istringstream s(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout;
      unsigned long inode = 0;
      s >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (state != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
      const size_t colon = local.find(':');
      const std::string hex = local.substr(0, colon);
      Listener l{family, "", static_cast<int>(strtoul(local.c_str() + colon + 1, nullptr, 16))};
      unsigned char addr[16];  // the kernel prints each 32-bit word in host order
      for (size_t w = 0; w < hex.size() / 8; ++w) {
        uint32_t word = static_cast<uint32_t>(strtoul(hex.substr(8 * w, 8).c_str(), nullptr, 16));
        memcpy(addr + 4 * w, &word, 4);
      }
      char text[INET6_ADDRSTRLEN] = {};
      inet_ntop(family, addr, text, sizeof text);
      l.host = text;
      if (l.host == "0.0.0.0") l.host = "127.0.0.1";
      if (l.host == "::") l.host = "::1";
      out.push_back(l);
    }
  }
  return out;
}

int connectTo(const Listener& l) {
  int fd = socket(l.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len;
  if (l.family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(l.port));
    inet_pton(AF_INET, l.host.c_str(), &a->sin_addr);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(l.port));
    inet_pton(AF_INET6, l.host.c_str(), &a->sin6_addr);
    len = sizeof *a;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string rootAddr(const Listener& l) {
  return l.family == AF_INET6 ? "[" + l.host + "]:" + std::to_string(l.port)
                              : l.host + ":" + std::to_string(l.port);
}

// Sidecar: tries to join as rank 1 at every listener rank 0 reports, with a
// wrong secret; reports back when done (one byte) so the genuine ranks start after.
void wrongSecretSidecar(SidecarContext& ctx) {
  uint32_t n = 0;
  ASSERT_TRUE(readFull(ctx.fromRoot, &n, sizeof n)) << "rank 0 sent no listeners";
  for (uint32_t i = 0; i < n; ++i) {
    Listener l{};
    uint32_t hostLen = 0;
    char host[INET6_ADDRSTRLEN] = {};
    ASSERT_TRUE(readFull(ctx.fromRoot, &l.family, sizeof l.family) &&
                readFull(ctx.fromRoot, &l.port, sizeof l.port) &&
                readFull(ctx.fromRoot, &hostLen, sizeof hostLen) && hostLen < sizeof host &&
                readFull(ctx.fromRoot, host, hostLen));
    l.host = host;
    for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK",
                          "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"})
      unsetenv(v);
    setenv("BRAID_RANK", "1", 1);
    setenv("BRAID_WORLD_SIZE", "3", 1);
    setenv("BRAID_ROOT_ADDR", rootAddr(l).c_str(), 1);
    setenv("BRAID_SECRET", "0123456789abcdef0123456789abcdef", 1);  // not the id's secret
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 2000;
    braidComm_t comm = nullptr;
    braidResult_t r = braidCommInitFromEnv(&comm, &cfg);
    EXPECT_NE(r, braidSuccess) << "a process with a wrong secret joined at " << rootAddr(l);
    if (r == braidSuccess) braidCommAbort(comm);
  }
  char done = 1;
  writeFull(ctx.toRoot, &done, 1);
}

std::vector<int> g_strangerFds;  // rank 0 only: closed after the all-reduce

void strangersAtTheRoot(RootHookContext& hook) {
  const std::vector<Listener> listeners = myTcpListeners();
  ASSERT_FALSE(listeners.empty()) << "braidGetUniqueId left no TCP listener in this process";
  for (const Listener& l : listeners) {
    int silent = connectTo(l);
    ASSERT_GE(silent, 0) << "connect to " << rootAddr(l) << ": " << strerror(errno);
    g_strangerFds.push_back(silent);
    int noisy = connectTo(l);
    ASSERT_GE(noisy, 0) << "connect to " << rootAddr(l) << ": " << strerror(errno);
    uint8_t junk[512];
    for (size_t i = 0; i < sizeof junk; ++i) junk[i] = static_cast<uint8_t>(mix(i) >> 7);
    (void)!send(noisy, junk, sizeof junk, MSG_NOSIGNAL);
    g_strangerFds.push_back(noisy);
  }
  uint32_t n = static_cast<uint32_t>(listeners.size());
  writeFull(hook.toSidecar[0], &n, sizeof n);
  for (const Listener& l : listeners) {
    uint32_t hostLen = static_cast<uint32_t>(l.host.size());
    writeFull(hook.toSidecar[0], &l.family, sizeof l.family);
    writeFull(hook.toSidecar[0], &l.port, sizeof l.port);
    writeFull(hook.toSidecar[0], &hostLen, sizeof hostLen);
    writeFull(hook.toSidecar[0], l.host.data(), hostLen);
  }
  char done = 0;
  EXPECT_TRUE(readFull(hook.fromSidecar[0], &done, 1)) << "the wrong-secret sidecar died";
}

TEST(Strangers, CommunicatorFormsDespiteThem) {
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 30;
  o.sidecars = 1;
  o.sidecarBody = wrongSecretSidecar;
  o.onUniqueId = strangersAtTheRoot;
  runRanks(o, [](RankContext& ctx) {
    int64_t in[5], out[5];
    for (int i = 0; i < 5; ++i) in[i] = (int64_t{1} << 40) * (ctx.rank + 1) + i;
    ASSERT_EQ(braidAllReduce(in, out, 5, braidInt64, braidSum, ctx.comm, nullptr), braidSuccess)
        << braidGetLastError(ctx.comm);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], (int64_t{1} << 40) * 6 + 3 * i);
    int count = 0;
    EXPECT_EQ(braidCommCount(ctx.comm, &count), braidSuccess);
    EXPECT_EQ(count, 3);
    for (int fd : g_strangerFds) close(fd);
  });
}

// N=3 with only ranks 0 and 1 started: both time out, in time, naming rank 2.
TEST(Strangers, RankThatNeverJoinsTimesOut) {
  RunOptions o;
  o.nranks = 3;
  o.started = 2;
  o.init = false;
  o.limitSeconds = 20;
  // The root lives in rank 0's process. A loaded machine may start rank 1 so
  // late that rank 0 has its verdict first; rank 0 then stays until rank 1 has
  // its own, as a launcher's rank 0 would while the job is torn down.
  o.sharedBytes = sizeof(sem_t);
  o.initShared = [](void* shared) { ASSERT_EQ(sem_init(static_cast<sem_t*>(shared), 1, 0), 0); };
  runRanks(o, [](RankContext& ctx) {
    auto* rank1Answered = static_cast<sem_t*>(ctx.shared);
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 1500;
    braidComm_t comm = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    braidResult_t r = braidCommInitRankConfig(&comm, 3, ctx.id, ctx.rank, &cfg);
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    const std::string message = braidGetLastError(nullptr);
    EXPECT_EQ(r, braidTimeout) << braidGetErrorString(r) << ": " << message;
    EXPECT_LE(ms, 1500 + 3000) << "init returned after " << ms << " ms";
    if (ctx.rank == 0) {
      EXPECT_GE(ms, 1000) << "the root gave up before its deadline";
    }
    EXPECT_TRUE(mentionsNumber(message, 2)) << "the message does not name rank 2: " << message;
    if (r == braidSuccess) braidCommAbort(comm);
    if (ctx.rank == 1) {
      ASSERT_EQ(sem_post(rank1Answered), 0);
    } else {
      while (sem_wait(rank1Answered) != 0) ASSERT_EQ(errno, EINTR);
    }
  });
}

}  // namespace
}  // namespace braid::itest
