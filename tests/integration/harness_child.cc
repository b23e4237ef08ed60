// The child side of the harness: gtest failures forwarded to the parent, the
// rendezvous (rank 0 gets the unique id and hands it out), init, body, exit.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "harness_internal.h"

namespace braid::itest {
namespace detail {
namespace {

constexpr int kMaxForwardedFailures = 30;

// Child side: forwards gtest failures to the parent, framed as u32 length +
// text. It replaces gtest's reporters (rather than listening), both the
// all-threads one and the main thread's own, so that it also works when the
// parent forked from inside EXPECT_NONFATAL_FAILURE, whose per-thread
// interceptor the child would otherwise inherit and report into.
class Sink {
 public:
  explicit Sink(int fd) : fd_(fd) {}
  void report(const ::testing::TestPartResult& r) {
    if (!r.failed()) return;
    int n = ++failures_;
    if (n > kMaxForwardedFailures) return;
    std::ostringstream s;
    s << (r.file_name() ? r.file_name() : "?") << ":" << r.line_number() << ": " << r.message();
    if (n == kMaxForwardedFailures) s << "\n(further failures of this process not shown)";
    std::string text = s.str();
    std::lock_guard<std::mutex> lock(mu_);  // one frame at a time from any thread
    uint32_t size = static_cast<uint32_t>(text.size());
    writeFull(fd_, &size, sizeof size);
    writeFull(fd_, text.data(), size);
  }
  int failures() const { return failures_; }

 private:
  int fd_;
  std::atomic<int> failures_{0};
  std::mutex mu_;
};

class Forwarder : public ::testing::ScopedFakeTestPartResultReporter {
 public:
  Forwarder(InterceptMode mode, Sink* sink) : ScopedFakeTestPartResultReporter(mode, &unused_), sink_(sink) {}
  void ReportTestPartResult(const ::testing::TestPartResult& r) override { sink_->report(r); }

 private:
  static inline ::testing::TestPartResultArray unused_;
  Sink* sink_;
};

[[noreturn]] void childExit(Sink* f) {
  fflush(nullptr);
  _exit(f->failures() == 0 ? 0 : 1);
}

// Never deleted: the child leaves with _exit() while they are installed.
// A rank's cases allocate and free buffers of several MiB each (a large
// matrix case holds a few of 8 MiB). glibc maps such a block afresh and
// unmaps it on free, so every case faulted all its pages in again, and on the
// CI VM's paravirtualized page tables the faults of 5 ranks at once took most
// of a big matrix test's time (Ranks/MatrixBig.Inline/N5_wide: 38 s, 18 s with
// freed memory kept). Blocks up to glibc's 32 MiB ceiling come from the heap,
// which is not trimmed, so the next case reuses pages already mapped.
void keepFreedMemory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

Sink* installForwarder(int reportFd) {
  auto* sink = new Sink(reportFd);
  new Forwarder(Forwarder::INTERCEPT_ALL_THREADS, sink);
  new Forwarder(Forwarder::INTERCEPT_ONLY_CURRENT_THREAD, sink);
  return sink;
}

}  // namespace

[[noreturn]] void rankMain(const RunOptions& o, const RankBody& body, const Plumbing& p, int rank,
                           void* shared) {
  keepFreedMemory();
  Sink* fwd = installForwarder(p.report[rank].w);
  RankContext ctx;
  ctx.rank = rank;
  ctx.nranks = o.nranks;
  ctx.shared = shared;
  if (!o.rendezvous) {
    // No unique id to hand out: the body tests entries that need no communicator.
  } else if (rank == 0) {
    braidResult_t r = braidGetUniqueId(&ctx.id);
    if (r != braidSuccess) {
      ADD_FAILURE() << "braidGetUniqueId: " << braidGetErrorString(r) << ": " << braidGetLastError(nullptr);
      childExit(fwd);
    }
    if (o.onUniqueId) {
      RootHookContext hook;
      hook.id = ctx.id;
      for (int k = 0; k < o.sidecars; ++k) {
        hook.toSidecar.push_back(p.toSidecar[k].w);
        hook.fromSidecar.push_back(p.fromSidecar[k].r);
      }
      o.onUniqueId(hook);
    }
    for (size_t r2 = 1; r2 < p.id.size(); ++r2) writeFull(p.id[r2].w, &ctx.id, sizeof ctx.id);
  } else if (!readFull(p.id[rank].r, &ctx.id, sizeof ctx.id)) {
    ADD_FAILURE() << "rank 0 never handed out the unique id";
    childExit(fwd);
  }
  if (o.init && o.rendezvous) {
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = o.braidTimeoutMs;
    braidResult_t r = braidCommInitRankConfig(&ctx.comm, o.nranks, ctx.id, rank, &cfg);
    if (r != braidSuccess) {
      ADD_FAILURE() << "braidCommInitRankConfig: " << braidGetErrorString(r) << ": "
                    << braidGetLastError(nullptr);
      childExit(fwd);
    }
  }
  body(ctx);
  if (ctx.comm) {
    if (fwd->failures() != 0) {
      braidCommAbort(ctx.comm);  // let the peers fail fast instead of waiting
    } else {
      braidResult_t r = braidCommDestroy(ctx.comm);
      EXPECT_EQ(r, braidSuccess) << "braidCommDestroy: " << braidGetLastError(nullptr);
    }
  }
  childExit(fwd);
}

[[noreturn]] void sidecarMain(const RunOptions& o, const Plumbing& p, int k, int reportIndex) {
  Sink* fwd = installForwarder(p.report[reportIndex].w);
  SidecarContext ctx;
  ctx.index = k;
  ctx.fromRoot = p.toSidecar[k].r;
  ctx.toRoot = p.fromSidecar[k].w;
  o.sidecarBody(ctx);
  childExit(fwd);
}

}  // namespace detail

bool readFull(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writeFull(int fd, const void* data, size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace braid::itest
