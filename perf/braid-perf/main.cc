// braid-perf: nccl-tests style benchmark of braid's collectives, written
// against the public C API only. See options.cc for the flags.
#include <braid/braid.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.h"
#include "device_buffers.h"
#include "memory.h"
#include "options.h"
#include "quant_bench.h"
#include "report.h"
#include "sizes.h"
#include "types.h"

namespace braid::perf {
namespace {

// What each rank tells rank 0 for the "#  Rank" lines.
struct RankInfo {
  int32_t pid;
  char host[60];
  char device[64];  // "cpu", or "cuda:N <name>" with --memory device
};

std::vector<RankInfo> gatherRankInfo(const RankContext& ctx, const std::string& device) {
  RankInfo mine{};
  mine.pid = static_cast<int32_t>(getpid());
  gethostname(mine.host, sizeof(mine.host) - 1);
  std::snprintf(mine.device, sizeof(mine.device), "%s", device.c_str());
  std::vector<RankInfo> all(ctx.nranks);
  braidResult_t rc = braidAllGather(&mine, all.data(), sizeof(RankInfo), braidUint8, ctx.comm, nullptr);
  if (rc != braidSuccess) fatal(ctx, "braidAllGather(rank info)", rc);
  return all;
}

std::string parametersLine(const PerfOptions& o, int nranks) {
  static const char* kTimeNames[] = {"rank0", "avg", "min", "max"};
  char buf[512];
  std::string step =
      o.stepFactor > 1 ? std::to_string(o.stepFactor) + "(factor)" : std::to_string(o.stepBytes) + "(bytes)";
  std::snprintf(
      buf, sizeof(buf),
      "# Collective %s nRanks %d minBytes %zu maxBytes %zu step: %s warmup iters: %d "
      "iters: %d validation: %d blocking: %d time: %s algo: %s memory: %s stream: %s registered: %d",
      o.collective->name, nranks, o.minBytes, o.maxBytes, step.c_str(), o.warmupIters, o.iters,
      o.check ? 1 : 0, o.blocking ? 1 : 0, kTimeNames[static_cast<int>(o.timeReduce)],
      o.algo.empty() ? "default" : o.algo.c_str(),
      o.memory == MemoryKind::kDevice      ? "device"
      : o.memory == MemoryKind::kShareable ? "shareable"
                                           : "host",
      o.blocking     ? "none"
      : o.cudaStream ? "cuda"
                     : "braid",
      o.registerBuffers ? 1 : 0);
  return buf;
}

// --memory device: the rank's device made current before anything touches
// CUDA, the communicator included (as NCCL wants cudaSetDevice before
// ncclCommInitRank). Returns the device for the rank lines ("cpu" with host
// memory).
std::string selectDevice(const RankContext& ctx, const PerfOptions& opts) {
  if (opts.memory != MemoryKind::kDevice) return "cpu";
  std::string description;
  if (std::string err = device::select(localRank(), &description); !err.empty()) fatalMessage(ctx, err);
  return description;
}

// Stream creation reports to the last error of no communicator (NULL).
[[noreturn]] void streamFailed(const RankContext& ctx, const char* what, braidResult_t rc) {
  fatalMessage(
      ctx, std::string(what) + " failed [" + braidGetErrorString(rc) + "]: " + braidGetLastError(nullptr));
}

// The stream the iterations are queued on: none with -z 1 (or where braid has
// no streams), a braid stream, or with --cuda-stream one wrapping a new
// cudaStream_t, whose refusal ends the run: it is what was asked to be measured.
void openStream(RankContext& ctx, PerfOptions& opts) {
  if (opts.blocking) return;
  braidResult_t rc;
  if (opts.cudaStream) {
    if (std::string err = device::streamCreate(&ctx.cudaStream); !err.empty()) fatalMessage(ctx, err);
    if ((rc = braidStreamWrapCuda(ctx.cudaStream, &ctx.stream)) != braidSuccess)
      streamFailed(ctx, "braidStreamWrapCuda", rc);
    return;
  }
  rc = braidStreamCreate(&ctx.stream);
  if (rc == braidNotSupported) {
    if (ctx.rank == 0) std::printf("# braid streams not supported here: running with -z 1\n");
    opts.blocking = true;
  } else if (rc != braidSuccess) {
    streamFailed(ctx, "braidStreamCreate", rc);
  }
}

void closeStream(RankContext& ctx) {
  braidResult_t rc;
  if (ctx.stream != nullptr && (rc = braidStreamDestroy(ctx.stream)) != braidSuccess) {
    fatal(ctx, "braidStreamDestroy", rc);
  }
  ctx.stream = nullptr;
  device::streamDestroy(ctx.cudaStream);  // after the braid stream that wraps it
  ctx.cudaStream = nullptr;
}

int run(PerfOptions& opts) {
  if (!opts.algo.empty()) {
    const char* current = std::getenv("BRAID_ALGO");
    setenv("BRAID_ALGO", withAlgo(current ? current : "", opts.collective->name, opts.algo).c_str(), 1);
  }
  RankContext ctx;
  const std::string deviceName = selectDevice(ctx, opts);
  braidResult_t rc = braidCommInitFromEnv(&ctx.comm, nullptr);
  if (rc != braidSuccess) {
    std::fprintf(stderr, "braid-perf: braidCommInitFromEnv failed [%s]: %s\n", braidGetErrorString(rc),
                 braidGetLastError(nullptr));
    return 1;
  }
  if ((rc = braidCommUserRank(ctx.comm, &ctx.rank)) != braidSuccess) fatal(ctx, "braidCommUserRank", rc);
  if ((rc = braidCommCount(ctx.comm, &ctx.nranks)) != braidSuccess) fatal(ctx, "braidCommCount", rc);
  if (opts.collective->rooted && opts.root >= ctx.nranks) {
    if (ctx.rank == 0) std::fprintf(stderr, "braid-perf: -r %d: only %d ranks\n", opts.root, ctx.nranks);
    braidCommDestroy(ctx.comm);
    return 2;
  }
  const std::vector<RankInfo> infos = gatherRankInfo(ctx, deviceName);
  openStream(ctx, opts);

  const bool root0 = ctx.rank == 0;
  const bool quantized = opts.quant.codec != braidCodecNone;
  if (root0) {
    std::printf("%s\n#\n# Using devices\n", parametersLine(opts, ctx.nranks).c_str());
    for (int r = 0; r < ctx.nranks; ++r) {
      std::printf("%s\n", rankLine(r, infos[r].pid, infos[r].host, infos[r].device).c_str());
    }
    std::printf("#\n%s", quantized ? quantTableHeader(opts.quant, opts.types.front()).c_str() : tableHeader().c_str());
    std::fflush(stdout);
  }

  const std::vector<size_t> sizes = sizeSweep(opts.minBytes, opts.maxBytes, opts.stepFactor, opts.stepBytes);
  Buffers buffers;
  if (std::string err = allocateBuffers(opts.memory, opts.maxBytes, &buffers); !err.empty())
    fatalMessage(ctx, err);
  void* registrations[2] = {nullptr, nullptr};
  if (opts.registerBuffers) {
    void* regions[2] = {buffers.send, buffers.recv};
    for (int i = 0; i < 2; ++i)
      if (buffers.bytes > 0 &&
          (rc = braidCommRegister(ctx.comm, regions[i], buffers.bytes, &registrations[i])) != braidSuccess)
        fatal(ctx, "braidCommRegister", rc);
  }
  const Collective& coll = *opts.collective;
  std::vector<std::optional<braidRedOp_t>> ops;
  if (coll.reduces) {
    ops.assign(opts.ops.begin(), opts.ops.end());
  } else {
    ops.push_back(std::nullopt);
  }

  // As nccl-tests: one untimed round at the largest size before the sweep,
  // so that the first sizes do not pay for first touches (buffers, staging,
  // connections' large-message paths) that later ones find done.
  if (!quantized && !sizes.empty() && opts.warmupIters > 0) {
    const ValuePlan plan = makePlan(opts.types.front(), ops.front(), ctx.nranks);
    const Layout layout =
        coll.layout(sizes.back(), typeInfo(plan.type).size, ctx.nranks, ctx.rank, opts.root);
    PerfOptions warm = opts;
    warm.iters = 1;
    warm.check = false;
    (void)runCell(ctx, warm, layout, plan, false, buffers);
    if (root0)
      std::printf("# warmed up: %d calls at %zu bytes before the sweep\n", opts.warmupIters, layout.bytes);
  }

  int64_t failedChecks = 0;
  double busBwSum = 0;
  int busBwCount = 0;
  for (braidDataType_t type : opts.types) {
    for (const std::optional<braidRedOp_t>& op : ops) {
      const ValuePlan plan = makePlan(type, op, ctx.nranks);
      for (size_t size : sizes) {
        const Layout layout = coll.layout(size, typeInfo(type).size, ctx.nranks, ctx.rank, opts.root);
        if (quantized) {
          QuantResult q[2] = {runQuantCell(ctx, opts, layout, type, false, buffers),
                              runQuantCell(ctx, opts, layout, type, true, buffers)};
          for (const QuantResult& r : q) {
            if (r.timing.skipped) continue;
            failedChecks += r.error.violations > 0;
            busBwSum += r.timing.busBw;
            ++busBwCount;
          }
          if (root0) {
            std::printf("%s%s%s\n",
                        rowPrefix(layout.bytes, layout.count, typeInfo(type).name, codecName(opts.quant.codec), -1)
                            .substr(0, 12 + 2 + 12 + 2 + 8 + 2 + 6)
                            .c_str(),
                        quantCells(q[0].timing.skipped, q[0].timing.timeUs, q[0].timing.algBw, q[0].timing.busBw,
                                   q[0].error)
                            .c_str(),
                        quantCells(q[1].timing.skipped, q[1].timing.timeUs, q[1].timing.algBw, q[1].timing.busBw,
                                   q[1].error)
                            .c_str());
            std::fflush(stdout);
          }
          continue;
        }
        Result cells[2];
        cells[0] = runCell(ctx, opts, layout, plan, false, buffers);
        if (coll.hasInPlace) {
          cells[1] = runCell(ctx, opts, layout, plan, true, buffers);
        } else {
          cells[1].skipped = true;
        }
        for (const Result& r : cells) {
          if (r.skipped) continue;
          failedChecks += r.wrong.value_or(0) > 0;
          busBwSum += r.busBw;
          ++busBwCount;
        }
        if (root0) {
          std::printf("%s%s%s\n",
                      rowPrefix(layout.bytes, layout.count, typeInfo(type).name, op ? opName(*op) : "none",
                                coll.rooted ? opts.root : -1)
                          .c_str(),
                      resultCells(cells[0]).c_str(), resultCells(cells[1]).c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  if (root0) {
    std::printf("%s#\n", footer(failedChecks, busBwCount ? busBwSum / busBwCount : 0).c_str());
    std::fflush(stdout);
  }
  closeStream(ctx);
  for (void* registration : registrations)
    if (registration != nullptr && (rc = braidCommDeregister(ctx.comm, registration)) != braidSuccess)
      fatal(ctx, "braidCommDeregister", rc);
  if ((rc = braidCommDestroy(ctx.comm)) != braidSuccess) {
    std::fprintf(stderr, "braid-perf: braidCommDestroy failed: %s\n", braidGetErrorString(rc));
    return 1;
  }
  freeBuffers(buffers);
  return failedChecks > 0 ? 1 : 0;
}

}  // namespace
}  // namespace braid::perf

int main(int argc, char** argv) {
  int exitCode = 0;
  std::optional<braid::perf::PerfOptions> opts = braid::perf::parseOptions(argc, argv, &exitCode);
  if (!opts) return exitCode;
  return braid::perf::run(*opts);
}
