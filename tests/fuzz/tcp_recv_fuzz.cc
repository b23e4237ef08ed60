// The TCP transport's receive path (tcp_recv.cc) on arbitrary byte streams:
// a TcpRecvComm over socketpairs, fed by a "sender" that writes raw bytes,
// frame headers (with a repaired check field, so the fuzzer reaches the
// message-matching logic behind the SipHash) and payload filler to any socket.
// Input: nSocks (1..4), nRecvs (1..4) each with capacity u16 and tag u8, then
// records until the end: control byte (socket = control % nSocks; kind =
// (control >> 4) % 3: 0 raw bytes [len u8], 1 frame header [tag u8, total u16,
// partSize u16, seq u8, partIndex u8, nParts u8], 2 filler [len u16]).
// All bytes are written first, then every sending side is closed, then the
// receives are tested in order.
// Properties: no crash or out-of-bounds write (each buffer is its own heap
// block of exactly its capacity); a completed receive reports at most its
// capacity; every receive completes or fails within a bounded number of test()
// calls once the sender has closed.
#include <sys/socket.h>

#include <memory>

#include "fixups.h"
#include "fuzz_input.h"
#include "fuzz_target.h"
#include "transports/tcp/tcp_comm.h"

namespace net = braid::net;
namespace tcp = braid::tcp;
using braid::fuzz::FuzzInput;

namespace {

constexpr size_t kMaxStreamBytes = 32 << 10;  // per socket; well under a socketpair's buffer

void appendRecord(FuzzInput& in, int kind, std::vector<uint8_t>* stream) {
  if (kind == 0) {
    std::vector<uint8_t> raw = in.take(in.u8());
    stream->insert(stream->end(), raw.begin(), raw.end());
  } else if (kind == 1) {
    tcp::FrameHeader h;
    h.tag = in.u8();
    h.total = in.u16();
    h.partSize = in.u16();
    h.seq = in.u8();
    h.partIndex = in.u8();
    h.nParts = in.u8();
    uint8_t bytes[tcp::kFrameHeaderBytes];
    tcp::encodeFrame(h, bytes);
    stream->insert(stream->end(), bytes, bytes + sizeof(bytes));
  } else {
    stream->resize(stream->size() + in.u16() % 8192, 0x5a);
  }
}

}  // namespace

BRAID_FUZZ_TARGET(tcp_recv) {
  FuzzInput in(data, size);
  int nSocks = 1 + in.u8() % 4;
  int nRecvs = 1 + in.u8() % 4;
  struct Posted {
    std::unique_ptr<uint8_t[]> buffer;  // exactly `capacity` bytes, or null for 0
    size_t capacity;
    uint32_t tag;
    braid::transport::Request* req = nullptr;
  };
  std::vector<Posted> posted;
  for (int i = 0; i < nRecvs; ++i) {
    size_t capacity = in.u16();
    uint32_t tag = in.u8();
    posted.push_back(Posted{capacity ? std::make_unique<uint8_t[]>(capacity) : nullptr, capacity, tag});
  }
  std::vector<std::vector<uint8_t>> streams(nSocks);
  while (in.left() > 0) {
    uint8_t control = in.u8();
    int s = control % nSocks;
    appendRecord(in, (control >> 4) % 3, &streams[s]);
    if (streams[s].size() > kMaxStreamBytes) streams[s].resize(kMaxStreamBytes);
  }

  std::vector<net::Fd> mine, theirs;
  for (int s = 0; s < nSocks; ++s) {
    int fds[2];
    BRAID_FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
    mine.emplace_back(fds[0]);
    theirs.emplace_back(fds[1]);
    if (!streams[s].empty()) {
      ssize_t n = send(fds[1], streams[s].data(), streams[s].size(), MSG_NOSIGNAL);
      BRAID_FUZZ_CHECK(n == static_cast<ssize_t>(streams[s].size()), "socketpair takes the whole stream");
    }
    shutdown(fds[1], SHUT_WR);
  }
  tcp::TcpRecvComm comm(std::move(mine), "fuzz-peer", std::make_shared<tcp::PollSet>());
  for (Posted& p : posted)
    BRAID_FUZZ_CHECK(comm.irecv(p.buffer.get(), p.capacity, p.tag, nullptr, &p.req).isOk() || p.req == nullptr,
                     "irecv either posts or refuses");

  for (Posted& p : posted) {
    if (!p.req) continue;
    bool done = false;
    // Each test() either moves bytes, completes or fails (every socket is at
    // EOF), and no stream is longer than kMaxStreamBytes.
    for (int calls = 0; !done; ++calls) {
      BRAID_FUZZ_CHECK(calls < 1000000, "receive neither completes nor fails after the sender closed");
      size_t got = 0;
      braid::Status st = comm.test(static_cast<tcp::TcpRequest*>(p.req), &done, &got);
      if (!st.isOk()) BRAID_FUZZ_CHECK(done, "a failed test() completes the request");
      if (done && st.isOk()) BRAID_FUZZ_CHECK(got <= p.capacity, "a receive never exceeds its capacity");
    }
  }
  return 0;
}
