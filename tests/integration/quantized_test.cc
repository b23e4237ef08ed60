// Quantized all-to-all(v) and all-gather over real processes, on shared memory
// and on TCP: every received block must equal, bit for bit, decoding the local
// encoding of what its owner sent (the wire adds no error beyond the codec's),
// for every codec, fp32 and bf16 host values, N in {1, 2, 3, 4, 5, 8}, uneven
// counts with zeros, several chunks per block (BRAID_CHUNK_BYTES is small), in
// place and out of place, inline and on a stream. Plus the argument checks and
// a codec mismatch between ranks, which must fail rather than decode garbage.
//
// Linked against braid's internals (not only libbraid) for the reference
// codec; the collectives are called through the public C API.
#include <braid/braid.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "harness.h"
#include "kernels/codec.h"

namespace braid::itest {
namespace {

struct Codec {
  braidCodec_t codec;
  kernels::WireFormat format;
};
const Codec kCodecs[] = {{braidCodecFloat16, kernels::WireFormat::kFloat16},
                         {braidCodecBfloat16, kernels::WireFormat::kBfloat16},
                         {braidCodecFloat8e4m3, kernels::WireFormat::kFloat8e4m3},
                         {braidCodecFloat8e5m2, kernels::WireFormat::kFloat8e5m2}};
const braidDataType_t kHostTypes[] = {braidFloat32, braidBfloat16};

size_t elemSize(braidDataType_t t) { return t == braidFloat32 ? 4 : 2; }

kernels::CodecParams paramsOf(const Codec& c, braidDataType_t t, const braidQuantConfig_t& q) {
  kernels::CodecParams p;
  p.format = c.format;
  p.hostType = static_cast<DataType>(t);
  p.lossScale = q.lossScale;
  p.blockSize = q.blockSize ? q.blockSize : kernels::kDefaultFp8BlockSize;
  return p;
}

// Values of wildly different scales per region (so fp8 blocks get different
// scales), with the odd special value; deterministic per (owner, seed).
std::vector<char> values(size_t count, braidDataType_t t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<char> out(count * elemSize(t));
  for (size_t i = 0; i < count; ++i) {
    float f = normal(rng) * std::ldexp(1.0f, static_cast<int>((i / 300 + seed) % 24) - 12);
    if (i % 997 == 13) f = (i % 2) ? INFINITY : NAN;
    if (i % 1009 == 7) f = -0.0f;
    if (t == braidFloat32) {
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

std::vector<char> roundTrip(const kernels::CodecParams& p, const char* v, size_t count) {
  std::vector<char> wire(kernels::encodedBytes(p, count)), back(count * dataTypeSize(p.hostType));
  kernels::encode(p, v, count, wire.data());
  kernels::decode(p, wire.data(), count, back.data());
  return back;
}

// Elements rank `from` sends to rank `to` in the all-to-all-v: uneven, zeros included.
size_t vCount(int from, int to) { return (from + 2 * to) % 5 == 1 ? 0 : 1000 + 6151 * ((from * 3 + to) % 4); }

braidComm_t initComm(RankContext& ctx, const char* transport) {
  setenv("BRAID_TRANSPORT", transport, 1);
  setenv("BRAID_CHUNK_BYTES", "8192", 1);  // several chunks per block
  braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
  cfg.timeoutMs = 30000;
  braidComm_t comm = nullptr;
  EXPECT_EQ(braidCommInitRankConfig(&comm, ctx.nranks, ctx.id, ctx.rank, &cfg), braidSuccess)
      << braidGetLastError(nullptr);
  return comm;
}

void checkAllToAll(braidComm_t comm, int n, int r, const Codec& c, braidDataType_t t, const braidQuantConfig_t& q,
                   braidStream_t stream) {
  const size_t es = elemSize(t), count = 5000;
  std::vector<char> in = values(n * count, t, 100 + r), out(n * count * es, 0x5a);
  ASSERT_EQ(braidAllToAllQuantizedConfig(in.data(), out.data(), count, t, c.codec, &q, comm, stream), braidSuccess)
      << braidGetLastError(comm);
  if (stream) {
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(comm);
  }
  const auto p = paramsOf(c, t, q);
  for (int from = 0; from < n; ++from) {
    std::vector<char> theirs = values(n * count, t, 100 + from);
    std::vector<char> want = roundTrip(p, theirs.data() + r * count * es, count);
    ASSERT_EQ(0, std::memcmp(want.data(), out.data() + from * count * es, count * es)) << "block from rank " << from;
  }
}

void checkAllToAllv(braidComm_t comm, int n, int r, const Codec& c, braidDataType_t t, const braidQuantConfig_t& q) {
  const size_t es = elemSize(t);
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t sTotal = 0, rTotal = 0;
  for (int p = n - 1; p >= 0; --p) {  // blocks laid out in reverse rank order: displacements matter
    sc[p] = vCount(r, p), sd[p] = sTotal, sTotal += sc[p] + 3;
    rc[p] = vCount(p, r), rd[p] = rTotal, rTotal += rc[p] + 1;
  }
  std::vector<char> in = values(sTotal, t, 200 + r), out(rTotal * es, 0x5a);
  ASSERT_EQ(braidAllToAllvQuantizedConfig(in.data(), sc.data(), sd.data(), out.data(), rc.data(), rd.data(), t,
                                          c.codec, &q, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  const auto p = paramsOf(c, t, q);
  for (int from = 0; from < n; ++from) {
    // Rebuild the sender's layout to find what it sent to this rank.
    size_t off = 0, theirTotal = 0, mine = 0;
    for (int k = n - 1; k >= 0; --k) {
      if (k == r) mine = off;
      off += vCount(from, k) + 3;
    }
    theirTotal = off;
    std::vector<char> theirs = values(theirTotal, t, 200 + from);
    std::vector<char> want = roundTrip(p, theirs.data() + mine * es, vCount(from, r));
    // Blocks may be empty (vCount 0): compare as ranges, memcmp must not get want's null data().
    ASSERT_EQ(want.size(), rc[from] * es) << "block from rank " << from;
    ASSERT_TRUE(std::equal(want.begin(), want.end(), out.begin() + static_cast<ptrdiff_t>(rd[from] * es)))
        << "block from rank " << from;
  }
}

void checkAllGather(braidComm_t comm, int n, int r, const Codec& c, braidDataType_t t, const braidQuantConfig_t& q,
                    bool inPlace) {
  const size_t es = elemSize(t), count = 7001;
  std::vector<char> mine = values(count, t, 300 + r), out(n * count * es, 0x5a);
  const void* send = mine.data();
  if (inPlace) {
    std::memcpy(out.data() + r * count * es, mine.data(), count * es);
    send = out.data() + r * count * es;
  }
  ASSERT_EQ(braidAllGatherQuantizedConfig(send, out.data(), count, t, c.codec, &q, comm, nullptr), braidSuccess)
      << braidGetLastError(comm);
  const auto p = paramsOf(c, t, q);
  for (int from = 0; from < n; ++from) {
    std::vector<char> theirs = values(count, t, 300 + from);
    std::vector<char> want = roundTrip(p, theirs.data(), count);
    ASSERT_EQ(0, std::memcmp(want.data(), out.data() + from * count * es, count * es)) << "block of rank " << from;
  }
}

class Quantized : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(Quantized, BitExactAgainstLocalRoundTrip) {
  RunOptions o;
  o.nranks = std::get<0>(GetParam());
  o.init = false;
  o.limitSeconds = 120;
  const char* transport = std::get<1>(GetParam());
  runRanks(o, [transport](RankContext& ctx) {
    braidComm_t comm = initComm(ctx, transport);
    ASSERT_NE(comm, nullptr);
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    for (const Codec& c : kCodecs) {
      for (braidDataType_t t : kHostTypes) {
        std::string where = "codec ";
        where.append(std::to_string(c.codec)).append(" dtype ").append(std::to_string(t));
        SCOPED_TRACE(where);
        braidQuantConfig_t q = BRAID_QUANT_CONFIG_INITIALIZER;
        if (c.codec == braidCodecFloat16) q.lossScale = 1024.0f;
        if (c.codec == braidCodecFloat8e4m3) q.blockSize = 128;
        ASSERT_NO_FATAL_FAILURE(checkAllToAll(comm, ctx.nranks, ctx.rank, c, t, q, c.codec % 2 ? stream : nullptr));
        ASSERT_NO_FATAL_FAILURE(checkAllToAllv(comm, ctx.nranks, ctx.rank, c, t, q));
        ASSERT_NO_FATAL_FAILURE(checkAllGather(comm, ctx.nranks, ctx.rank, c, t, q, t == braidBfloat16));
      }
    }
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Quantized,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 5, 8), ::testing::Values("shm", "tcp")),
                         [](const ::testing::TestParamInfo<std::tuple<int, const char*>>& p) {
                           std::string name = "N";
                           return name.append(std::to_string(std::get<0>(p.param))).append("_").append(std::get<1>(p.param));
                         });

// Bad arguments: a clear InvalidArgument, nothing sent, buffers untouched.
// The codes of a quantized all-to-all are sent from the executor's scratch,
// which over shm is shareable memory: the receiving rank reads them through
// a mapping of the sender's block (its shm transport's INFO line says so),
// not with process_vm_readv, and the values arrive exact (small integers,
// which fp16 holds exactly).
TEST(QuantizedOverShm, CodesAreReadThroughAMappingOfTheSendersScratch) {
  setenv("BRAID_DEBUG", "INFO", 1);
  setenv("BRAID_DEBUG_FILE", "/tmp/braid-quant-shm-test-%p.log", 1);
  RunOptions o;
  o.nranks = 2;
  o.limitSeconds = 60;
  runRanks(o, [](RankContext& ctx) {
    const size_t count = 100000;  // 200 KB of codes a peer: past the shm transport's CMA threshold
    std::vector<float> in(2 * count), out(2 * count, -1.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i + ctx.rank * 7) % 1000);
    for (int call = 0; call < 3; ++call)
      ASSERT_EQ(braidAllToAllQuantized(in.data(), out.data(), count, braidFloat32, braidCodecFloat16,
                                       ctx.comm, nullptr),
                braidSuccess)
          << braidGetLastError(ctx.comm);
    size_t wrong = 0;
    for (int p = 0; p < 2; ++p)
      for (size_t i = 0; i < count; ++i)
        wrong += out[p * count + i] != static_cast<float>((ctx.rank * count + i + p * 7) % 1000);
    EXPECT_EQ(wrong, 0u);
    const std::string log = "/tmp/braid-quant-shm-test-" + std::to_string(getpid()) + ".log";
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    unlink(log.c_str());
    EXPECT_NE(text.str().find("shm: reading process"), std::string::npos) << text.str();
  });
  unsetenv("BRAID_DEBUG");
  unsetenv("BRAID_DEBUG_FILE");
}

TEST(QuantizedArguments, RejectedBeforeAnythingMoves) {
  RunOptions o;
  o.nranks = 2;
  o.limitSeconds = 60;
  runRanks(o, [](RankContext& ctx) {
    braidComm_t comm = ctx.comm;
    float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {};
    int32_t ints[8] = {};
    size_t counts[2] = {2, 2}, displs[2] = {0, 2}, odd[2] = {2, 2};
    odd[ctx.rank] = 3;  // own block sizes that disagree
    braidQuantConfig_t bad = BRAID_QUANT_CONFIG_INITIALIZER;
    struct Bad {
      const char* what;
      const char* names;
      braidResult_t got;
    };
    braidQuantConfig_t lossOnBf16 = BRAID_QUANT_CONFIG_INITIALIZER;
    lossOnBf16.lossScale = 8.0f;
    braidQuantConfig_t block12 = BRAID_QUANT_CONFIG_INITIALIZER;
    block12.blockSize = 12;
    braidQuantConfig_t hugeLoss = BRAID_QUANT_CONFIG_INITIALIZER;
    hugeLoss.lossScale = INFINITY;
    bad.magic = 0;
    const Bad cases[] = {
        {"int32 input", "datatype", braidAllToAllQuantized(ints, out, 4, braidInt32, braidCodecFloat16, comm, nullptr)},
        {"unknown codec", "codec", braidAllToAllQuantized(in, out, 4, braidFloat32, static_cast<braidCodec_t>(9), comm, nullptr)},
        {"config not from the initializer", "config",
         braidAllGatherQuantizedConfig(in, out, 4, braidFloat32, braidCodecFloat16, &bad, comm, nullptr)},
        {"loss scale on bf16", "loss scale",
         braidAllToAllQuantizedConfig(in, out, 4, braidFloat32, braidCodecBfloat16, &lossOnBf16, comm, nullptr)},
        {"fp8 block of 12", "block size",
         braidAllToAllQuantizedConfig(in, out, 4, braidFloat32, braidCodecFloat8e4m3, &block12, comm, nullptr)},
        {"infinite loss scale", "loss scale",
         braidAllToAllQuantizedConfig(in, out, 4, braidFloat32, braidCodecFloat16, &hugeLoss, comm, nullptr)},
        {"NULL recvbuff", "recvbuff", braidAllToAllQuantized(in, nullptr, 4, braidFloat32, braidCodecFloat16, comm, nullptr)},
        {"count overflow", "count", braidAllGatherQuantized(in, out, SIZE_MAX / 2, braidFloat32, braidCodecFloat16, comm, nullptr)},
        {"own counts differ", "own rank",
         braidAllToAllvQuantized(in, counts, displs, out, odd, displs, braidFloat32, braidCodecFloat16, comm, nullptr)},
        {"overlapping buffers", "overlap",
         braidAllToAllQuantized(in, in + 1, 2, braidFloat32, braidCodecBfloat16, comm, nullptr)},
    };
    for (const Bad& b : cases) {
      EXPECT_EQ(b.got, braidInvalidArgument) << b.what;
      EXPECT_NE(std::string(braidGetLastError(comm)).size(), 0u);
    }
    // Messages name the argument (checked one at a time: last error is per call).
    EXPECT_EQ(braidAllToAllQuantized(in, out, 4, braidFloat32, static_cast<braidCodec_t>(9), comm, nullptr),
              braidInvalidArgument);
    EXPECT_NE(std::string(braidGetLastError(comm)).find("codec"), std::string::npos) << braidGetLastError(comm);
    EXPECT_EQ(braidAllToAllQuantizedConfig(in, out, 4, braidFloat32, braidCodecFloat8e4m3, &block12, comm, nullptr),
              braidInvalidArgument);
    EXPECT_NE(std::string(braidGetLastError(comm)).find("block size"), std::string::npos) << braidGetLastError(comm);
    for (float v : out) EXPECT_EQ(v, 0.0f);  // untouched
    // braidCodecNone is the plain collective, and the communicator still works.
    float mine[2] = {float(ctx.rank), float(ctx.rank) + 0.5f}, got[2] = {};
    ASSERT_EQ(braidAllToAllQuantized(mine, got, 1, braidFloat32, braidCodecNone, comm, nullptr), braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(got[0], ctx.rank == 0 ? 0.0f : 0.5f);
    EXPECT_EQ(got[1], ctx.rank == 0 ? 1.0f : 1.5f);
  });
}

// Ranks that disagree on the codec must fail (the tag carries the format),
// never hand back one format's bytes decoded as another's.
TEST(QuantizedArguments, CodecMismatchBetweenRanksFails) {
  RunOptions o;
  o.nranks = 2;
  o.limitSeconds = 60;
  o.braidTimeoutMs = 5000;
  runRanks(o, [](RankContext& ctx) {
    std::vector<float> in(2000, 1.5f), out(2000, 0.0f);
    braidCodec_t codec = ctx.rank == 0 ? braidCodecFloat16 : braidCodecBfloat16;
    braidResult_t r = braidAllToAllQuantized(in.data(), out.data(), 1000, braidFloat32, codec, ctx.comm, nullptr);
    // fp16 and bf16 chunks have the same size: without the format in the tag
    // both ranks would succeed with garbage. The rank that sees the foreign
    // tag first fails on it and closes; the other then sees that.
    EXPECT_TRUE(r == braidRemoteError || r == braidTimeout) << braidGetErrorString(r);
    const std::string msg = braidGetLastError(ctx.comm);
    EXPECT_TRUE(msg.find("tag") != std::string::npos || msg.find("rank " + std::to_string(1 - ctx.rank)) != std::string::npos)
        << msg;
  });
}

}  // namespace
}  // namespace braid::itest
