// Seeds of the targets for bytes from peer ranks: the bootstrap inbox's
// frames, quantized payloads, the topology exchange and the shm setup
// messages. Deterministic, like seeds.cc.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/codec.h"
#include "seeds.h"
#include "topo/comm_view.h"
#include "transports/shm/handshake.h"

namespace braid::fuzz {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void le(Bytes* b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes inboxFrame(uint32_t tag, uint64_t announced, size_t payload) {
  Bytes b;
  le(&b, tag, 4);
  le(&b, announced, 8);
  for (size_t i = 0; i < payload; ++i) b.push_back(static_cast<uint8_t>(i * 7 + 1));
  return b;
}

void inboxSeeds(std::vector<Seed>* out) {
  const Bytes stream = cat(cat(inboxFrame(1, 5, 5), inboxFrame(0x80000001u, 0, 0)), inboxFrame(2, 300, 300));
  out->push_back({"bootstrap_inbox", "three_frames_whole", cat({0xff}, stream)});
  out->push_back({"bootstrap_inbox", "three_frames_bytewise", cat({0}, stream)});
  out->push_back({"bootstrap_inbox", "three_frames_by_7", cat({6}, stream)});
  out->push_back({"bootstrap_inbox", "oversized_4g", cat({0xff}, inboxFrame(3, uint64_t{1} << 32, 16))});
  out->push_back(
      {"bootstrap_inbox", "over_limit_by_one", cat({0xff}, inboxFrame(3, (uint64_t{64} << 20) + 1, 0))});
  out->push_back(
      {"bootstrap_inbox", "at_limit_stalled", cat({0xff}, inboxFrame(3, uint64_t{64} << 20, 100))});
  out->push_back({"bootstrap_inbox", "truncated_header", {0xff, 1, 0, 0, 0, 5}});
}

// Wire bytes for values, encoded by the library (so decode starts from real payloads).
Bytes encoded(const kernels::CodecParams& p, const std::vector<float>& values) {
  Bytes wire(kernels::encodedBytes(p, values.size()));
  kernels::encode(p, values.data(), values.size(), wire.data());
  return wire;
}

void codecSeeds(std::vector<Seed>* out) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> values = {0.0f,    -0.0f, 1.0f, -2.5f, 65504.0f, 1e-7f,
                               3.0e38f, inf,   -inf, nan,   448.0f,   1e-40f};
  for (int i = 0; i < 28; ++i) values.push_back(std::ldexp(static_cast<float>(i % 5) - 2.0f, i - 14));
  kernels::CodecParams p;
  // Control: bits 0-1 format, bit 2 bf16 host; then block-size and loss-scale bytes.
  p.format = kernels::WireFormat::kFloat16;
  out->push_back({"codec_decode", "fp16", cat({0, 0, 64}, encoded(p, values))});
  p.lossScale = 1024.0f;
  out->push_back({"codec_decode", "fp16_scaled", cat({0, 0, 74}, encoded(p, values))});
  p.lossScale = 1.0f;
  p.format = kernels::WireFormat::kBfloat16;
  out->push_back({"codec_decode", "bf16", cat({1, 0, 64}, encoded(p, values))});
  out->push_back({"codec_decode", "bf16_to_bf16_host", cat({5, 0, 64}, encoded(p, values))});
  p.format = kernels::WireFormat::kFloat8e4m3;
  p.blockSize = 8;
  const Bytes e4m3 = encoded(p, values);
  out->push_back({"codec_decode", "e4m3_block8", cat({2, 0, 64}, e4m3)});
  out->push_back({"codec_decode", "e4m3_short_tail", cat({2, 0, 64}, Bytes(e4m3.begin(), e4m3.end() - 3))});
  Bytes badScale = e4m3;
  const float hugeScale = 3.0e38f;
  std::memcpy(badScale.data(), &nan, 4);
  std::memcpy(badScale.data() + 12, &hugeScale, 4);
  std::memcpy(badScale.data() + 24, &inf, 4);
  out->push_back({"codec_decode", "e4m3_corrupt_scales", cat({6, 0, 64}, badScale)});
  p.format = kernels::WireFormat::kFloat8e5m2;
  p.blockSize = 16;
  out->push_back({"codec_decode", "e5m2_block16", cat({3, 1, 64}, encoded(p, values))});
  out->push_back({"codec_decode", "e5m2_bf16_host", cat({7, 1, 64}, encoded(p, values))});
}

std::string rankView(int rank, const char* host, int numa, int nics) {
  topo::RankView v;
  v.rank = rank;
  v.hostId = std::string("host-id-") + host;
  v.hostname = host;
  v.numa = numa;
  v.numaCount = 2;
  v.cpus = topo::CpuList({2 * rank, 2 * rank + 1, 64 + rank});
  for (int i = 0; i < nics; ++i) {
    topo::Nic n;
    n.name = i == 0 ? "eth0" : "mlx5_" + std::to_string(i);
    n.kind = i == 0 ? topo::NicKind::kNetdev : topo::NicKind::kRdma;
    n.pci = "0000:3b:00." + std::to_string(i);
    n.numa = i % 2;
    n.speedMbps = 100000;
    n.netdev = i == 0 ? "" : "eth" + std::to_string(i);
    v.nics.push_back(n);
  }
  return topo::encodeRankView(v);
}

Bytes gathered(const std::vector<std::string>& views) {
  Bytes b = {static_cast<uint8_t>(views.size() - 1)};
  for (const std::string& v : views) {
    le(&b, v.size(), 2);
    b.insert(b.end(), v.begin(), v.end());
  }
  return b;
}

void topologySeeds(std::vector<Seed>* out) {
  out->push_back({"comm_topology", "one_rank", gathered({rankView(0, "a", 0, 1)})});
  out->push_back({"comm_topology", "two_hosts",
                  gathered({rankView(0, "a", 0, 2), rankView(1, "a", 1, 2), rankView(2, "b", -1, 1)})});
  out->push_back(
      {"comm_topology", "hosts_disagree", gathered({rankView(0, "a", 0, 2), rankView(1, "a", 0, 0)})});
  out->push_back(
      {"comm_topology", "wrong_order", gathered({rankView(1, "a", 0, 0), rankView(0, "a", 0, 0)})});
  out->push_back({"comm_topology", "not_json", gathered({"{\"v\":1,", rankView(1, "a", 0, 0)})});
  out->push_back({"comm_topology", "deep_nesting", gathered({std::string(300, '[')})});
  topo::CommTopology c;
  std::vector<topo::RankView> views(2);
  (void)topo::decodeRankView(rankView(0, "a", 0, 1), &views[0]);
  (void)topo::decodeRankView(rankView(1, "b", 1, 1), &views[1]);
  (void)topo::mergeRankViews(views, &c);
  const std::string doc = topo::encodeCommTopology(c);
  out->push_back({"comm_topology", "document", cat({0x80}, Bytes(doc.begin(), doc.end()))});
}

template <typename T>
Bytes bytesOf(const T& v) {
  Bytes b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

void shmSeeds(std::vector<Seed>* out) {
  shm::Hello hello;
  hello.nonce = 0x0123456789abcdef, hello.connectorId = 3, hello.ringBytes = 1 << 20, hello.mac = 0x42;
  shm::Reply reply;
  reply.nonce = hello.nonce, reply.flags = shm::kFlagCma, reply.mac = 0x43;
  reply.probeAddr = 0x7ffc12345678, reply.probeValue = 0x5eed;
  // Control: bits 0-2 descriptors passed, bit 3 a Reply is expected.
  out->push_back({"shm_setup", "hello", cat({2}, bytesOf(hello))});
  out->push_back({"shm_setup", "reply", cat({8 | 1}, bytesOf(reply))});
  out->push_back({"shm_setup", "zero_bytes_with_fds", {2}});
  out->push_back({"shm_setup", "hello_too_many_fds", cat({7}, bytesOf(hello))});
  const Bytes helloBytes = bytesOf(hello);
  out->push_back({"shm_setup", "hello_short", cat({2}, Bytes(helloBytes.begin(), helloBytes.begin() + 20))});
  out->push_back({"shm_setup", "hello_as_reply", cat({8 | 1}, bytesOf(hello))});
}

}  // namespace

void peerSeeds(std::vector<Seed>* out) {
  inboxSeeds(out);
  codecSeeds(out);
  topologySeeds(out);
  shmSeeds(out);
}

}  // namespace braid::fuzz
