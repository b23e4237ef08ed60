#include <gtest/gtest.h>

#include <vector>

#include "options.h"
#include "types.h"

namespace braid::perf {
namespace {

std::optional<PerfOptions> parse(std::vector<const char*> args, int* code) {
  args.insert(args.begin(), "braid-perf");
  *code = -1;
  return parseOptions(static_cast<int>(args.size()), args.data(), code);
}

TEST(PerfOptions, DefaultsAreNcclTests) {
  int code;
  std::optional<PerfOptions> o = parse({"allreduce"}, &code);
  ASSERT_TRUE(o);
  EXPECT_STREQ(o->collective->name, "allreduce");
  EXPECT_EQ(o->minBytes, size_t{32} << 20);
  EXPECT_EQ(o->maxBytes, size_t{32} << 20);
  EXPECT_EQ(o->stepFactor, 1u);
  EXPECT_EQ(o->stepBytes, size_t{1} << 20);
  EXPECT_EQ(o->iters, 20);
  EXPECT_EQ(o->warmupIters, 5);
  EXPECT_TRUE(o->check);
  EXPECT_EQ(o->types, std::vector<braidDataType_t>{braidFloat32});
  EXPECT_EQ(o->ops, std::vector<braidRedOp_t>{braidSum});
  EXPECT_EQ(o->root, 0);
  EXPECT_FALSE(o->blocking);
  EXPECT_EQ(o->timeReduce, TimeReduce::kMax);
  EXPECT_TRUE(o->algo.empty());
}

TEST(PerfOptions, ShortAndLongFlags) {
  int code;
  std::optional<PerfOptions> o =
      parse({"broadcast", "-b",   "8",  "-e",  "128M", "-f", "2",  "-n", "7",  "-w", "0",  "-c",   "0",
             "-d",        "bf16", "-o", "all", "-r",   "3",  "-z", "1",  "-a", "1",  "-A", "chain"},
            &code);
  ASSERT_TRUE(o);
  EXPECT_STREQ(o->collective->name, "broadcast");
  EXPECT_EQ(o->minBytes, 8u);
  EXPECT_EQ(o->maxBytes, size_t{128} << 20);
  EXPECT_EQ(o->stepFactor, 2u);
  EXPECT_EQ(o->iters, 7);
  EXPECT_EQ(o->warmupIters, 0);
  EXPECT_FALSE(o->check);
  EXPECT_EQ(o->types, std::vector<braidDataType_t>{braidBfloat16});
  EXPECT_EQ(o->ops.size(), 6u);  // the five built-in ops and premulsum
  EXPECT_EQ(o->root, 3);
  EXPECT_TRUE(o->blocking);
  EXPECT_EQ(o->timeReduce, TimeReduce::kAverage);
  EXPECT_EQ(o->algo, "chain");

  o = parse({"allgather", "--minbytes", "1K", "--maxbytes", "4K", "--stepbytes", "1K", "--datatype", "all",
             "--iters", "3"},
            &code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->types.size(), 12u);
  EXPECT_EQ(o->stepBytes, 1024u);
}

TEST(PerfOptions, RejectsBadInput) {
  int code;
  EXPECT_FALSE(parse({}, &code));  // a collective is required
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"allfoo"}, &code));
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"allreduce", "-d", "float128"}, &code));
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"allreduce", "-o", "xor"}, &code));
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"allreduce", "-b", "1Q"}, &code));
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"allreduce", "-b", "2M", "-e", "1M"}, &code));
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"allreduce", "-c", "2"}, &code));
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"allreduce", "-n", "0"}, &code));
  EXPECT_NE(code, 0);
}

TEST(PerfOptions, MemoryKindAndCudaStream) {
  int code;
  std::optional<PerfOptions> o = parse({"allreduce"}, &code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->memory, MemoryKind::kHost);
  EXPECT_FALSE(o->cudaStream);
  o = parse({"allreduce", "--memory", "device", "--cuda-stream"}, &code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->memory, MemoryKind::kDevice);
  EXPECT_TRUE(o->cudaStream);
  o = parse({"alltoall", "--memory", "device", "-z", "1"}, &code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->memory, MemoryKind::kDevice);

  o = parse({"alltoall", "--memory", "shareable", "-R", "1"}, &code);  // braidMemAlloc's host memory
  ASSERT_TRUE(o);
  EXPECT_EQ(o->memory, MemoryKind::kShareable);
  EXPECT_TRUE(o->registerBuffers);
  EXPECT_FALSE(parse({"alltoall", "--memory", "shareable", "--cuda-stream"}, &code));
  EXPECT_EQ(code, 2);

  EXPECT_FALSE(parse({"allreduce", "--memory", "gpu"}, &code));
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"allreduce", "--cuda-stream"}, &code));  // host memory
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"allreduce", "--memory", "device", "--cuda-stream", "-z", "1"}, &code));
  EXPECT_EQ(code, 2);
  // Quantized calls take device buffers too (coded on the GPU, core/device_staging.h).
  o = parse({"alltoall", "--memory", "device", "-q", "fp16"}, &code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->memory, MemoryKind::kDevice);
  EXPECT_EQ(o->quant.codec, braidCodecFloat16);
}

TEST(PerfOptions, TypeAndOpNames) {
  EXPECT_EQ(parseType("half"), braidFloat16);
  EXPECT_EQ(parseType("FLOAT"), braidFloat32);
  EXPECT_EQ(parseType("f8e5m2"), braidFloat8e5m2);
  EXPECT_EQ(parseType("int"), braidInt32);
  EXPECT_FALSE(parseType("float128"));
  EXPECT_EQ(parseOp("avg"), braidAvg);
  EXPECT_FALSE(parseOp("none"));
  for (braidDataType_t t : allTypes()) EXPECT_EQ(parseType(typeInfo(t).name), t);
}

TEST(PerfOptions, RegisterBuffers) {
  int code;
  std::optional<PerfOptions> o = parse({"allreduce"}, &code);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->registerBuffers);
  o = parse({"allgather", "-R", "1"}, &code);
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->registerBuffers);
  o = parse({"allgather", "--register", "0"}, &code);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->registerBuffers);
  EXPECT_FALSE(parse({"allreduce", "-R", "2"}, &code));
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"allreduce", "-R", "1", "--memory", "device"}, &code));  // host memory only
  EXPECT_EQ(code, 2);
}

TEST(PerfOptions, AlgoOverrideKeepsOtherCollectives) {
  EXPECT_EQ(withAlgo("", "allreduce", "ring"), "allreduce:ring");
  EXPECT_EQ(withAlgo("allreduce:rhd;broadcast:chain", "allreduce", "ring"), "broadcast:chain;allreduce:ring");
  EXPECT_EQ(withAlgo("broadcast:chain;", "reduce", "tree"), "broadcast:chain;reduce:tree");
}

}  // namespace
}  // namespace braid::perf
