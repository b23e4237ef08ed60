#include "options.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "sizes.h"
#include "types.h"

namespace braid::perf {

namespace {

constexpr const char* kDescription =
    "braid-perf: nccl-tests style sweeps of braid collectives.\n"
    "Run under a launcher, e.g.  braid-run -n 4 braid-perf allreduce -b 8 -e 128M -f 2\n"
    "Every size is checked (#wrong) unless -c 0; rank 0 prints the table.";

// Raw text of the flags whose parsing CLI11 cannot do for us.
struct RawFlags {
  std::string minBytes = "32M", maxBytes = "32M", stepBytes = "1M";
  std::string datatype = "float", op = "sum";
  int check = 1, blocking = 0, average = 3, registered = 0;
  std::string quant = "none";
  std::string memory = "host";
};

void addFlags(CLI::App* sub, PerfOptions& o, RawFlags& raw) {
  sub->add_option("-b,--minbytes", raw.minBytes, "Smallest size (bytes; K/M/G suffixes)")
      ->capture_default_str();
  sub->add_option("-e,--maxbytes", raw.maxBytes, "Largest size")->capture_default_str();
  sub->add_option("-i,--stepbytes", raw.stepBytes, "Size increment when -f is 1")->capture_default_str();
  sub->add_option("-f,--stepfactor", o.stepFactor, "Size multiplier (>1 replaces -i)")->capture_default_str();
  sub->add_option("-n,--iters", o.iters, "Timed iterations per size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("-w,--warmup_iters", o.warmupIters, "Untimed iterations before each size")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("-c,--check", raw.check, "Verify results (#wrong): 1 or 0")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  sub->add_option("-d,--datatype", raw.datatype,
                  "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 "
                  "f8e5m2, or all")
      ->capture_default_str();
  sub->add_option("-o,--op", raw.op,
                  "sum prod max min avg premulsum (alias mulsum), or all (reducing collectives)")
      ->capture_default_str();
  sub->add_option("-r,--root", o.root, "Root rank (broadcast, reduce, gather, scatter)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("-z,--blocking", raw.blocking,
                  "1: every call runs inline (NULL stream); 0: iterations are queued on a "
                  "braid stream and synchronized once")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  sub->add_option("-a,--average", raw.average,
                  "Reported time across ranks: 0 rank 0, 1 average, 2 min, 3 max (nccl-tests "
                  "defaults to 1; braid-perf to the slowest rank)")
      ->capture_default_str()
      ->check(CLI::Range(0, 3));
  sub->add_option("-A,--algo", o.algo,
                  "Force an algorithm: sets BRAID_ALGO=<collective>:NAME before init (other "
                  "collectives' entries are kept). The names are the library's algorithm "
                  "registry's; an unknown one fails init with the list of known ones, and a "
                  "collective gets choices as algorithms are added to the registry");
  sub->add_option("-q,--quant", raw.quant,
                  "alltoall / allgather only: send the values as fp16, bf16, e4m3 or e5m2 on the wire "
                  "(quantized collective; -d float or bfloat16). busbw counts the caller's payload; the "
                  "error columns replace #wrong")
      ->capture_default_str();
  sub->add_option("--fp8-block", o.quant.blockSize, "-q e4m3 / e5m2: values per scaled block")
      ->capture_default_str();
  sub->add_option("--loss-scale", o.quant.lossScale, "-q fp16: loss scale")->capture_default_str();
  sub->add_option("--memory", raw.memory,
                  "Where the send and receive buffers live: host, shareable (host memory from "
                  "braidMemAlloc, which peers on the host may map and read directly), or device "
                  "(cudaMalloc on CUDA device local rank % device count; the inputs are written on the "
                  "host and copied up, the result copied down for the check)")
      ->capture_default_str()
      ->check(CLI::IsMember({"host", "shareable", "device"}));
  sub->add_option("-R,--register", raw.registered,
                  "Register the send and receive buffers with braidCommRegister before the sweep: 1 or 0 "
                  "(over ibverbs their messages then pin no memory each; elsewhere no effect)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  sub->add_flag("--cuda-stream", o.cudaStream,
                "--memory device: queue the calls on a braid stream wrapping a cudaStream_t "
                "(braidStreamWrapCuda) and time until cudaStreamSynchronize returns");
}

// Converts the raw flags; "" on success, else the message for the user.
std::string finish(PerfOptions& o, const RawFlags& raw) {
  auto size = [](const std::string& text, size_t* out, const char* flag) -> std::string {
    std::optional<size_t> v = parseSize(text);
    if (!v) return std::string(flag) + ": not a size: " + text;
    *out = *v;
    return "";
  };
  for (std::string err : {size(raw.minBytes, &o.minBytes, "-b"), size(raw.maxBytes, &o.maxBytes, "-e"),
                          size(raw.stepBytes, &o.stepBytes, "-i")}) {
    if (!err.empty()) return err;
  }
  if (o.minBytes > o.maxBytes) return "-b must not exceed -e";
  if (o.stepFactor <= 1 && o.stepBytes == 0 && o.minBytes != o.maxBytes) {
    return "-i 0 with -f 1 cannot reach -e";
  }
  if (raw.datatype == "all") {
    o.types = allTypes();
  } else if (std::optional<braidDataType_t> t = parseType(raw.datatype)) {
    o.types = {*t};
  } else {
    return "-d: unknown datatype " + raw.datatype;
  }
  if (raw.op == "all") {
    o.ops = allOps();
  } else if (std::optional<braidRedOp_t> op = parseOp(raw.op)) {
    o.ops = {*op};
  } else {
    return "-o: unknown op " + raw.op;
  }
  std::optional<braidCodec_t> codec = parseCodec(raw.quant);
  if (!codec) return "-q: unknown codec " + raw.quant + " (fp16, bf16, e4m3, e5m2, none)";
  o.quant.codec = *codec;
  if (o.quant.codec != braidCodecNone) {
    if (o.collective->kind != CollectiveKind::kAllToAll && o.collective->kind != CollectiveKind::kAllGather)
      return std::string("-q: only alltoall and allgather have quantized forms, not ") + o.collective->name;
    for (braidDataType_t t : o.types)
      if (t != braidFloat32 && t != braidBfloat16) return "-q: -d must be float or bfloat16";
  }
  o.check = raw.check != 0;
  o.blocking = raw.blocking != 0;
  o.memory = raw.memory == "device"      ? MemoryKind::kDevice
             : raw.memory == "shareable" ? MemoryKind::kShareable
                                         : MemoryKind::kHost;
  if (o.cudaStream && o.memory != MemoryKind::kDevice) return "--cuda-stream needs --memory device";
  if (o.cudaStream && o.blocking) return "--cuda-stream queues the calls: not with -z 1";
  o.registerBuffers = raw.registered != 0;
  if (o.registerBuffers && o.memory == MemoryKind::kDevice)
    return "-R 1 registers host memory: not with --memory device";
  o.timeReduce = static_cast<TimeReduce>(raw.average);
  return "";
}

}  // namespace

std::optional<PerfOptions> parseOptions(int argc, const char* const* argv, int* exitCode) {
  PerfOptions opts;
  RawFlags raw;
  CLI::App app{kDescription, "braid-perf"};
  app.require_subcommand(1);
  for (const Collective& c : collectives()) {
    CLI::App* sub = app.add_subcommand(c.name, std::string("Measure ") + c.name);
    addFlags(sub, opts, raw);
    sub->callback([&opts, &c] { opts.collective = &c; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return std::nullopt;
  }
  if (std::string err = finish(opts, raw); !err.empty()) {
    std::fprintf(stderr, "braid-perf: %s\n", err.c_str());
    *exitCode = 2;
    return std::nullopt;
  }
  return opts;
}

std::string withAlgo(const std::string& current, const std::string& collective, const std::string& algo) {
  std::string out;
  std::stringstream in(current);
  std::string entry;
  const std::string key = collective + ":";
  while (std::getline(in, entry, ';')) {
    if (entry.empty() || entry.starts_with(key)) continue;
    out += entry + ";";
  }
  return out + key + algo;
}

}  // namespace braid::perf
