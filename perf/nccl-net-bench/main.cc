// nccl-net-bench: an NCCL net plugin measured without NCCL or a GPU. Ranks
// (started by braid-run, fabric or any launcher braidCommInitFromEnv knows)
// form a ring through the plugin and shift a message around it as NCCL's
// proxy moves a ring step between hosts; braid's own communicator only
// carries the plugin's handles (NCCL's bootstrap does that in NCCL) and the
// timings. Every size is checked (#wrong).
//
//   braid-run -n 2 nccl-net-bench -b 8 -e 64M -f 4
//   fabric run --hosts 2 --rate 1gbit -- nccl-net-bench -b 1M -e 64M -f 4
#include <braid/braid.h>
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ring_shift.h"
#include "sizes.h"

namespace braid::netbench {
namespace {

constexpr int kTimeoutMs = 120000;

struct Options {
  std::string minBytes = "8", maxBytes = "64M", chunk = "512K";
  size_t stepFactor = 2;
  int iters = 20, warmup = 5, depth = 8, check = 1;
  std::string plugin = "libnccl-net-braid.so";
  int netVersion = 0;
};

braidComm_t comm = nullptr;
int rank = 0, nranks = 1;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "nccl-net-bench rank %d: %s\n", rank, what.c_str());
  std::fflush(stderr);
  if (comm) braidCommAbort(comm);
  std::exit(1);
}

void check(braidResult_t rc, const char* what) {
  if (rc != braidSuccess)
    die(std::string(what) + ": " + braidGetErrorString(rc) + ": " + braidGetLastError(comm));
}

// The plugin's WARN lines, which say why a call failed.
void logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (level != NCCL_LOG_WARN) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "nccl-net-bench rank %d: ", rank);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// The table NCCL would take (the newest), or the one asked for.
netplugin::NetApi loadPlugin(const std::string& path, int version) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) die(std::string("cannot load the plugin: ") + dlerror());
  netplugin::NetApi net;
  if (braid::Status st = netplugin::NetApi::find(lib, path, version, &net); !st.isOk()) die(st.message());
  if (ncclResult_t r = net.init(logger); r != ncclSuccess)
    die("the plugin's init failed (" + std::to_string(r) + ")");
  return net;
}

uint8_t patternByte(size_t i, int sender) { return static_cast<uint8_t>(i * 131 + sender * 17 + 1); }

double maxOverRanks(double v) {
  double out = 0;
  check(braidAllReduce(&v, &out, 1, braidFloat64, braidMax, comm, nullptr), "braidAllReduce");
  return out;
}

int run(const Options& o, size_t chunk, const std::vector<size_t>& sizes) {
  netplugin::NetApi net = loadPlugin(o.plugin, o.netVersion);
  int ndev = 0;
  if (net.devices(&ndev) != ncclSuccess || ndev < 1) die("the plugin offers no device");
  ncclNetProperties_v11_t props{};
  if (net.getProperties(0, &props) != ncclSuccess) die("getProperties(0) failed");

  RingLinks links;
  std::vector<char> handles(static_cast<size_t>(nranks) * NCCL_NET_HANDLE_MAXSIZE);
  char mine[NCCL_NET_HANDLE_MAXSIZE] = {};
  if (net.listen(0, mine, &links.listen) != ncclSuccess) die("listen failed");
  check(braidAllGather(mine, handles.data(), NCCL_NET_HANDLE_MAXSIZE, braidUint8, comm, nullptr),
        "braidAllGather");
  int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  if (std::string e = connectRing(net, 0, &handles[static_cast<size_t>(next) * NCCL_NET_HANDLE_MAXSIZE],
                                  &links, kTimeoutMs);
      !e.empty())
    die(e);

  ShiftPlan plan;
  plan.chunkBytes = chunk;
  plan.depth = o.depth;
  plan.sendTag = rank;
  plan.recvTag = prev;
  if (rank == 0) {
    std::printf(
        "# nccl-net-bench: %s (%s, ncclNetPlugin_v%d), %d ranks in a ring, device %s at %d Mbit/s, chunk "
        "%zu, "
        "depth %d\n",
        o.plugin.c_str(), net.name(), net.version(), nranks, props.name, props.speed, chunk, o.depth);
    std::printf("# %12s %12s %12s %12s %8s\n", "size", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  }
  bool anyWrong = false;
  for (size_t bytes : sizes) {
    std::vector<uint8_t> send(bytes), recv(bytes);
    for (size_t i = 0; i < bytes; ++i) send[i] = patternByte(i, rank);
    void *sendMr = nullptr, *recvMr = nullptr;
    if (net.regMr(links.send, send.data(), bytes, NCCL_PTR_HOST, &sendMr) != ncclSuccess ||
        net.regMr(links.recv, recv.data(), bytes, NCCL_PTR_HOST, &recvMr) != ncclSuccess)
      die("regMr failed");
    auto once = [&] {
      if (std::string e =
              shift(net, links, plan, send.data(), recv.data(), bytes, sendMr, recvMr, kTimeoutMs);
          !e.empty())
        die(e);
    };
    for (int i = 0; i < o.warmup; ++i) once();
    check(braidBarrier(comm, nullptr), "braidBarrier");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; ++i) once();
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / o.iters;
    double slowest = maxOverRanks(us);
    double wrong = 0;
    if (o.check) {
      std::fill(recv.begin(), recv.end(), 0);
      once();
      size_t bad = 0;
      for (size_t i = 0; i < bytes; ++i) bad += recv[i] != patternByte(i, prev);
      double mineBad = static_cast<double>(bad);
      check(braidAllReduce(&mineBad, &wrong, 1, braidFloat64, braidSum, comm, nullptr), "braidAllReduce");
    }
    net.deregMr(links.send, sendMr);
    net.deregMr(links.recv, recvMr);
    if (rank == 0) {
      double gbps = slowest > 0 ? static_cast<double>(bytes) / slowest / 1e3 : 0;
      std::printf("  %12zu %12.2f %12.3f %12.3f %8.0f\n", bytes, slowest, gbps, gbps, wrong);
      std::fflush(stdout);
    }
    if (wrong > 0 && rank == 0) std::fprintf(stderr, "nccl-net-bench: %.0f bytes arrived wrong\n", wrong);
    anyWrong = anyWrong || wrong > 0;
  }
  closeRing(net, &links);
  return anyWrong ? 1 : 0;  // every rank knows: wrong is the sum over ranks
}

}  // namespace
}  // namespace braid::netbench

int main(int argc, char** argv) {
  using namespace braid::netbench;
  Options o;
  CLI::App app{
      "nccl-net-bench: a ring shift through an NCCL net plugin (ncclNetPlugin_v8 to _v11), as NCCL's proxy "
      "drives "
      "it,\n"
      "without NCCL or a GPU. Run under a launcher, e.g.  braid-run -n 2 nccl-net-bench"};
  app.add_option("-b,--minbytes", o.minBytes, "Smallest size (bytes; K/M/G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", o.maxBytes, "Largest size")->capture_default_str();
  app.add_option("-f,--stepfactor", o.stepFactor, "Size multiplier")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  app.add_option("-n,--iters", o.iters, "Timed iterations per size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("-w,--warmup_iters", o.warmup, "Untimed iterations first")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("-c,--check", o.check, "Verify every size (#wrong): 1 or 0")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  app.add_option("--chunk", o.chunk, "Bytes per isend / irecv (NCCL: NCCL_BUFFSIZE / 8 = 512K)")
      ->capture_default_str();
  app.add_option("--depth", o.depth, "Chunks in flight each way (NCCL_STEPS: 8)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--plugin", o.plugin, "The plugin library (dlopen'ed as NCCL does)")->capture_default_str();
  app.add_option("--net-version", o.netVersion,
                 "Its table to drive: 8 to 11 for ncclNetPlugin_v8 to _v11; 0 the newest, as NCCL takes it")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 8, 9, 10, 11}));
  CLI11_PARSE(app, argc, argv);

  auto lo = braid::perf::parseSize(o.minBytes), hi = braid::perf::parseSize(o.maxBytes);
  auto chunk = braid::perf::parseSize(o.chunk);
  if (!lo || !hi || !chunk) {
    std::fprintf(stderr, "nccl-net-bench: bad size in -b, -e or --chunk\n");
    return 2;
  }
  if (*chunk == 0 || *chunk > (1u << 30)) {
    std::fprintf(stderr, "nccl-net-bench: --chunk must be 1 byte .. 1G (test() reports int sizes)\n");
    return 2;
  }
  std::vector<size_t> sizes = braid::perf::sizeSweep(*lo, *hi, o.stepFactor, 0);
  if (sizes.empty()) {
    std::fprintf(stderr, "nccl-net-bench: no sizes between -b and -e\n");
    return 2;
  }
  check(braidCommInitFromEnv(&comm, nullptr), "braidCommInitFromEnv");
  check(braidCommCount(comm, &nranks), "braidCommCount");
  check(braidCommUserRank(comm, &rank), "braidCommUserRank");
  int rc = run(o, *chunk, sizes);
  braidCommDestroy(comm);
  return rc;
}
