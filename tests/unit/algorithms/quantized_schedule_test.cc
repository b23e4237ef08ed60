// Quantized all-to-all(v) and all-gather schedules, run in the simulator for
// many rank counts and random step orders: every output must equal, bit for
// bit, decoding the local encoding of what its owner sent; and the schedules
// must pipeline (no more than a window of chunks encoded ahead of the wire).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "algorithms/quantized/quantized.h"
#include "algorithms/sim/simulator.h"

namespace braid::algo {
namespace {

using kernels::CodecParams;
using kernels::WireFormat;

CodecParams codecOf(WireFormat f, DataType host, uint32_t block = 16) {
  CodecParams p;
  p.format = f;
  p.hostType = host;
  p.blockSize = block;
  p.lossScale = f == WireFormat::kFloat16 ? 4.0f : 1.0f;
  return p;
}

// Host values of varied magnitude (so fp8 blocks get different scales), a
// few specials included.
std::vector<char> hostValues(size_t count, DataType host, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> f(count);
  for (size_t i = 0; i < count; ++i) f[i] = normal(rng) * std::ldexp(1.0f, static_cast<int>(i / 40 % 20) - 10);
  if (count > 5) f[5] = -0.0f;
  std::vector<char> out(count * dataTypeSize(host));
  if (host == DataType::kFloat32) {
    std::memcpy(out.data(), f.data(), out.size());
  } else {  // bf16: truncation is fine, any bit pattern is a valid input
    for (size_t i = 0; i < count; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &f[i], 4);
      uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

// decode(encode(values)) in one piece: what the wire must deliver.
std::vector<char> roundTrip(const CodecParams& p, const char* values, size_t count) {
  std::vector<char> wire(kernels::encodedBytes(p, count)), back(count * dataTypeSize(p.hostType));
  kernels::encode(p, values, count, wire.data());
  kernels::decode(p, wire.data(), count, back.data());
  return back;
}

struct Case {
  Collective collective;
  int n;
  CodecParams codec;
  uint64_t seed;
  size_t chunkBytes;
};

std::string name(const Case& c) {
  return std::string(collectiveName(c.collective)) + " n=" + std::to_string(c.n) + " " +
         kernels::wireFormatName(c.codec.format) + " host=" + dataTypeName(c.codec.hostType) +
         " seed=" + std::to_string(c.seed) + " chunk=" + std::to_string(c.chunkBytes);
}

// Per (sender, receiver) element counts: uneven, with zeros.
size_t pairCount(int from, int to, uint64_t seed) {
  return (from * 37 + to * 11 + seed) % 7 == 0 ? 0 : (from * 53 + to * 29 + seed * 7) % 90;
}

void runAllToAll(const Case& c) {
  SCOPED_TRACE(name(c));
  const int n = c.n;
  const size_t es = dataTypeSize(c.codec.hostType);
  const bool v = c.collective == Collective::kAllToAllv;
  const size_t fixed = 45;
  auto count = [&](int from, int to) { return v ? pairCount(from, to, c.seed) : fixed; };
  std::vector<CollectiveArgs> args(n);
  std::vector<std::vector<char>> in(n), out(n);
  for (int r = 0; r < n; ++r) {
    CollectiveArgs& a = args[r];
    a.collective = c.collective;
    a.nranks = n;
    a.rank = r;
    a.dtype = c.codec.hostType;
    a.quantized = true;
    a.codec = c.codec;
    a.chunkBytes = c.chunkBytes;
    a.count = fixed;
    size_t sdisp = 3, rdisp = 1;  // leading gaps: displacements are honoured
    for (int p = 0; p < n; ++p) {
      a.sendCounts.push_back(count(r, p));
      a.sendDispls.push_back(sdisp);
      sdisp += count(r, p) + 2;
      a.recvCounts.push_back(count(p, r));
      a.recvDispls.push_back(rdisp);
      rdisp += count(p, r) + 1;
    }
    in[r] = hostValues(v ? sdisp : n * fixed, a.dtype, c.seed * 1000 + r);
    out[r].assign((v ? rdisp : n * fixed) * es, 0x5a);
  }
  std::vector<Schedule> schedules(n);
  std::vector<SimRank> ranks(n);
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(buildQuantizedAllToAll(args[r], &schedules[r]).isOk());
    ASSERT_TRUE(schedules[r].validate(n, {in[r].size(), out[r].size()}).isOk())
        << schedules[r].validate(n, {in[r].size(), out[r].size()}).message();
    ranks[r].schedule = &schedules[r];
    ranks[r].buffers = {in[r].data(), out[r].data()};
  }
  SimOptions opt;
  opt.seed = c.seed;
  Status st = simulate(ranks, opt);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      const CollectiveArgs& a = args[p];
      const size_t m = count(p, r);
      const size_t sOff = (v ? a.sendDispls[r] : r * fixed) * es;
      const size_t rOff = (v ? args[r].recvDispls[p] : p * fixed) * es;
      std::vector<char> want = roundTrip(c.codec, in[p].data() + sOff, m);
      ASSERT_EQ(0, std::memcmp(want.data(), out[r].data() + rOff, m * es)) << "rank " << r << " block from " << p;
    }
  }
}

void runAllGather(const Case& c, bool inPlace) {
  SCOPED_TRACE(name(c) + (inPlace ? " in place" : ""));
  const int n = c.n;
  const size_t es = dataTypeSize(c.codec.hostType), count = 77;
  std::vector<std::vector<char>> in(n), out(n), sent(n);
  std::vector<Schedule> schedules(n);
  std::vector<SimRank> ranks(n);
  for (int r = 0; r < n; ++r) {
    CollectiveArgs a;
    a.collective = Collective::kAllGather;
    a.nranks = n;
    a.rank = r;
    a.count = count;
    a.dtype = c.codec.hostType;
    a.quantized = true;
    a.codec = c.codec;
    a.chunkBytes = c.chunkBytes;
    sent[r] = hostValues(count, a.dtype, c.seed * 77 + r);
    out[r].assign(n * count * es, 0x5a);
    if (inPlace) std::memcpy(out[r].data() + r * count * es, sent[r].data(), count * es);
    else in[r] = sent[r];
    ASSERT_TRUE(buildQuantizedAllGather(a, &schedules[r]).isOk());
    char* input = inPlace ? out[r].data() + r * count * es : in[r].data();
    ranks[r].schedule = &schedules[r];
    ranks[r].buffers = {input, out[r].data()};
  }
  SimOptions opt;
  opt.seed = c.seed;
  Status st = simulate(ranks, opt);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int r = 0; r < n; ++r)
    for (int p = 0; p < n; ++p) {
      std::vector<char> want = roundTrip(c.codec, sent[p].data(), count);
      ASSERT_EQ(0, std::memcmp(want.data(), out[r].data() + p * count * es, count * es)) << "rank " << r << " block " << p;
    }
}

// Pre-encoded (the GPU codes, core/device_staging.h): the buffers hold wire
// bytes, block p of `count` values at p * encodedBytes(count), and every
// rank's output must hold its owners' encodings byte for byte.
void runPreEncoded(const Case& c) {
  SCOPED_TRACE(name(c) + " pre-encoded");
  const int n = c.n;
  const bool gather = c.collective == Collective::kAllGather;
  const size_t count = 150;  // several chunks at the cases' chunk sizes, a short fp8 block at the end
  const size_t blockWire = kernels::encodedBytes(c.codec, count);
  // wire[r][p]: rank r's encoding of its block for p (all-gather: its one block).
  std::vector<std::vector<std::vector<char>>> wire(n);
  std::vector<std::vector<char>> in(n), out(n);
  std::vector<Schedule> schedules(n);
  std::vector<SimRank> ranks(n);
  for (int r = 0; r < n; ++r) {
    CollectiveArgs a;
    a.collective = c.collective;
    a.nranks = n;
    a.rank = r;
    a.count = count;
    a.dtype = c.codec.hostType;
    a.quantized = true;
    a.preEncoded = true;
    a.codec = c.codec;
    a.chunkBytes = c.chunkBytes;
    const int blocks = gather ? 1 : n;
    for (int p = 0; p < blocks; ++p) {
      const std::vector<char> values = hostValues(count, a.dtype, c.seed * 1000 + r * 31 + p);
      wire[r].emplace_back(blockWire);
      kernels::encode(c.codec, values.data(), count, wire[r].back().data());
      in[r].insert(in[r].end(), wire[r].back().begin(), wire[r].back().end());
    }
    out[r].assign(n * blockWire, 0x5a);
    ASSERT_TRUE(
        (gather ? buildQuantizedAllGather(a, &schedules[r]) : buildQuantizedAllToAll(a, &schedules[r]))
            .isOk());
    ASSERT_TRUE(schedules[r].validate(n, {in[r].size(), out[r].size()}).isOk());
    ranks[r].schedule = &schedules[r];
    ranks[r].buffers = {in[r].data(), out[r].data()};
  }
  SimOptions opt;
  opt.seed = c.seed;
  Status st = simulate(ranks, opt);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int r = 0; r < n; ++r)
    for (int p = 0; p < n; ++p) {
      const std::vector<char>& want = gather ? wire[p][0] : wire[p][r];
      ASSERT_EQ(0, std::memcmp(want.data(), out[r].data() + p * blockWire, blockWire))
          << "rank " << r << " block " << p;
    }
}

std::vector<CodecParams> allCodecs() {
  std::vector<CodecParams> out;
  for (DataType host : {DataType::kFloat32, DataType::kBfloat16})
    for (int f = 0; f < kernels::kNumWireFormats; ++f) out.push_back(codecOf(static_cast<WireFormat>(f), host));
  return out;
}

TEST(QuantizedSchedules, AllToAllEveryCodecAndRankCount) {
  for (const CodecParams& codec : allCodecs())
    for (int n : {1, 2, 3, 4, 5, 7, 8, 13})
      for (Collective c : {Collective::kAllToAll, Collective::kAllToAllv})
        for (uint64_t seed : {0, 3})
          ASSERT_NO_FATAL_FAILURE(runAllToAll({c, n, codec, seed, seed ? 64u : 200u}));
}

TEST(QuantizedSchedules, AllGatherEveryCodecAndRankCount) {
  for (const CodecParams& codec : allCodecs())
    for (int n : {1, 2, 3, 4, 5, 7, 8, 13})
      for (uint64_t seed : {0, 5})
        for (bool inPlace : {false, true}) ASSERT_NO_FATAL_FAILURE(runAllGather({Collective::kAllGather, n, codec, seed, 96}, inPlace));
}

TEST(QuantizedSchedules, PreEncodedMovesTheWireUnchanged) {
  for (const CodecParams& codec : allCodecs())
    for (int n : {1, 2, 3, 5, 8})
      for (Collective c : {Collective::kAllToAll, Collective::kAllGather})
        for (uint64_t seed : {1, 4})
          ASSERT_NO_FATAL_FAILURE(runPreEncoded({c, n, codec, seed, seed == 1 ? 64u : 512u}));
}

TEST(QuantizedSchedules, ManyRanksAndRandomOrders) {
  const CodecParams e4m3 = codecOf(WireFormat::kFloat8e4m3, DataType::kFloat32, 8);
  for (int n : {31, 64}) ASSERT_NO_FATAL_FAILURE(runAllToAll({Collective::kAllToAllv, n, e4m3, 9, 32}));
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    ASSERT_NO_FATAL_FAILURE(runAllToAll({Collective::kAllToAllv, 4, e4m3, seed, 32}));
    ASSERT_NO_FATAL_FAILURE(runAllGather({Collective::kAllGather, 5, e4m3, seed, 32}, seed % 2));
  }
}

// Chunks are block aligned for fp8, and a tiny chunkBytes still makes progress.
TEST(QuantizedSchedules, ChunksAreCodecAligned) {
  CollectiveArgs a;
  a.codec = codecOf(WireFormat::kFloat8e5m2, DataType::kFloat32, 64);
  a.chunkBytes = 1000;  // 250 values: rounds down to 192
  EXPECT_EQ(192u, quantizedChunkElems(a));
  a.chunkBytes = 4;
  EXPECT_EQ(64u, quantizedChunkElems(a));
  a.codec = codecOf(WireFormat::kFloat16, DataType::kBfloat16);
  a.chunkBytes = 1000;
  EXPECT_EQ(500u, quantizedChunkElems(a));
}

// The pipeline, structurally: with many chunks, only the first window of
// encodes can start at once; every later one waits for a chunk to leave, and
// sends and decodes wait for exactly their own encode / receive.
TEST(QuantizedSchedules, EncodingRunsAtMostAWindowAheadOfTheWire) {
  CollectiveArgs a;
  a.collective = Collective::kAllToAll;
  a.nranks = 3;
  a.rank = 1;
  a.count = 1000;
  a.quantized = true;
  a.codec = codecOf(WireFormat::kFloat16, DataType::kFloat32);
  a.chunkBytes = 2 << 20;  // 512 Ki values, 1 MiB of fp16: a window of kQuantMinWindow chunks
  a.count = 10 * (512 << 10);  // 10 chunks per block
  Schedule s;
  ASSERT_TRUE(buildQuantizedAllToAll(a, &s).isOk());
  size_t encodes = 0, freeEncodes = 0, sends = 0, decodes = 0;
  for (const Step& st : s.steps) {
    if (st.kind == StepKind::kEncode) {
      ++encodes;
      if (st.depCount == 0) ++freeEncodes;
    }
    if (st.kind == StepKind::kSend) {
      ++sends;
      ASSERT_EQ(1u, st.depCount);
      EXPECT_EQ(StepKind::kEncode, s.steps[s.deps[st.depBegin]].kind);
    }
    if (st.kind == StepKind::kDecode) ++decodes;
  }
  const size_t w = quantizedWindow(1 << 20), slot = 1 << 20;
  EXPECT_EQ(w, kQuantMinWindow);
  EXPECT_EQ(30u, encodes);  // own block too
  EXPECT_EQ(w, freeEncodes);
  EXPECT_EQ(20u, sends);
  EXPECT_EQ(30u, decodes);
  // Scratch: a window of slots per direction, not the whole message.
  ASSERT_EQ(2u, s.scratchBytes.size());
  EXPECT_EQ(w * slot, s.scratchBytes[0]);
  EXPECT_EQ(w * slot, s.scratchBytes[1]);
}

TEST(QuantizedSchedules, WindowHoldsAboutFourMegabytesOfWire) {
  EXPECT_EQ(quantizedWindow(64 << 10), 64u);
  EXPECT_EQ(quantizedWindow(1 << 20), kQuantMinWindow);
  EXPECT_EQ(quantizedWindow(16), kQuantMaxWindow);
}

TEST(QuantizedSchedules, CodecsGetDistinctTags) {
  std::vector<uint8_t> seen;
  for (Collective c : {Collective::kAllToAll, Collective::kAllToAllv, Collective::kAllGather})
    for (int f = 0; f < kernels::kNumWireFormats; ++f) {
      uint8_t t = quantizedTagKind(c, static_cast<WireFormat>(f));
      EXPECT_GE(t, 16u);  // above every plain collective's tag kind
      for (uint8_t s : seen) EXPECT_NE(s, t);
      seen.push_back(t);
    }
}

}  // namespace
}  // namespace braid::algo
