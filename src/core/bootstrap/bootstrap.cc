#include "core/bootstrap/bootstrap.h"

#include <utility>

#include "base/log.h"
#include "core/bootstrap/gatekeeper.h"
#include "core/bootstrap/rendezvous.h"
#include "core/bootstrap/wire.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

constexpr uint32_t kAllGatherTag = Bootstrap::kReservedTagBase + 1;
constexpr uint32_t kBarrierTag = Bootstrap::kReservedTagBase + 2;

}  // namespace

Bootstrap::Bootstrap(int rank, int nranks, int timeoutMs, const transport::Secret& secret)
    : rank_(rank),
      nranks_(nranks),
      timeoutMs_(timeoutMs),
      secret_(secret),
      out_(static_cast<size_t>(nranks)),
      outError_(static_cast<size_t>(nranks)) {}

Bootstrap::~Bootstrap() = default;

Status Bootstrap::create(const UniqueId& id, int rank, int nranks, int timeoutMs,
                         std::unique_ptr<Bootstrap>* out) {
  if (nranks < 1) return invalidArgument("nranks must be at least 1, got " + std::to_string(nranks));
  if (rank < 0 || rank >= nranks)
    return invalidArgument("rank " + std::to_string(rank) + " is out of range for nranks=" +
                           std::to_string(nranks) + ": ranks are 0.." + std::to_string(nranks - 1));
  if (timeoutMs <= 0)
    return invalidArgument("bootstrap timeout must be positive, got " + std::to_string(timeoutMs) +
                           " ms");
  Deadline deadline(timeoutMs);
  net::Fd listener;
  std::unique_ptr<Bootstrap> b(new Bootstrap(rank, nranks, timeoutMs, id.secret));
  BRAID_RETURN_IF_ERROR(joinRendezvous(id, rank, nranks, timeoutMs, deadline, &listener, &b->peers_));
  b->inbox_ = std::make_unique<Inbox>(std::move(listener), id.secret, rank, nranks,
                                      Gatekeeper::kDefaultHandshakeTimeoutMs);
  BRAID_RETURN_IF_ERROR(b->inbox_->start());
  BRAID_INFO("rank %d of %d: bootstrap formed", rank, nranks);
  *out = std::move(b);
  return Status::ok();
}

Status Bootstrap::checkPeer(int peer, const char* what) const {
  if (peer < 0 || peer >= nranks_)
    return invalidArgument(std::string("bootstrap ") + what + ": peer " + std::to_string(peer) +
                           " is out of range for nranks=" + std::to_string(nranks_));
  return Status::ok();
}

Status Bootstrap::send(int peer, uint32_t tag, const void* data, size_t size) {
  BRAID_RETURN_IF_ERROR(checkPeer(peer, "send"));
  if (tag >= kReservedTagBase) return invalidArgument("bootstrap send: tags from 0x80000000 are reserved");
  if (data == nullptr && size > 0) return invalidArgument("bootstrap send: null data");
  return sendTo(peer, tag, data, size, Deadline(timeoutMs_));
}

Status Bootstrap::recv(int peer, uint32_t tag, void* data, size_t size) {
  BRAID_RETURN_IF_ERROR(checkPeer(peer, "recv"));
  if (tag >= kReservedTagBase) return invalidArgument("bootstrap recv: tags from 0x80000000 are reserved");
  if (data == nullptr && size > 0) return invalidArgument("bootstrap recv: null data");
  return recvFrom(peer, tag, data, size, Deadline(timeoutMs_));
}

Status Bootstrap::sendTo(int peer, uint32_t tag, const void* data, size_t size,
                         const Deadline& deadline) {
  // Checked here, not only by the receiving inbox, so the caller hears why.
  if (size > Inbox::kMaxMessageBytes)
    return invalidArgument("bootstrap send of " + std::to_string(size) + " bytes: over the " +
                           std::to_string(Inbox::kMaxMessageBytes) + "-byte limit of a bootstrap message");
  if (peer == rank_) {
    inbox_->putLocal(tag, data, size);
    return Status::ok();
  }
  Status& broken = outError_[static_cast<size_t>(peer)];
  if (!broken.isOk()) return broken;
  net::Fd& fd = out_[static_cast<size_t>(peer)];
  const std::string route = "bootstrap send from rank " + std::to_string(rank_) + " to rank " +
                            std::to_string(peer) + " at " + address(peer).toString();
  Status st;
  if (!fd.valid()) {
    st = net::connectTo(address(peer), deadline, &fd);
    if (st.isOk())
      st = net::authenticateConnector(fd.get(), secret_, net::Purpose::kBootstrap,
                                      static_cast<uint64_t>(rank_), deadline);
    if (!st.isOk()) {
      fd.reset();  // nothing was sent yet: a later send may try again
      return st.prefix(route);
    }
  }
  std::vector<uint8_t> header;
  wire::Writer w(&header);
  w.u32(tag);
  w.u64(size);
  st = net::sendAll(fd.get(), header.data(), header.size(), deadline);
  if (st.isOk()) st = net::sendAll(fd.get(), data, size, deadline);
  if (!st.isOk()) {
    // Part of a frame may be on the wire: this stream can never be used again.
    fd.reset();
    Code code = st.code() == Code::kTimeout ? Code::kTimeout : Code::kRemoteError;
    broken = Status(code, route + ": " + st.message());
    return broken;
  }
  return Status::ok();
}

Status Bootstrap::recvFrom(int peer, uint32_t tag, void* data, size_t size,
                           const Deadline& deadline) {
  return inbox_->take(peer, tag, data, size, deadline, timeoutMs_);
}

Status Bootstrap::allGather(void* data, size_t sizePerRank) {
  if (data == nullptr && sizePerRank > 0) return invalidArgument("bootstrap allGather: null data");
  Deadline deadline(timeoutMs_);
  auto* base = static_cast<uint8_t*>(data);
  const int next = (rank_ + 1) % nranks_;
  const int prev = (rank_ + nranks_ - 1) % nranks_;
  // Step s forwards the slot that arrived in step s-1 (our own at s = 0).
  for (int s = 0; s < nranks_ - 1; ++s) {
    size_t sendSlot = static_cast<size_t>((rank_ - s + nranks_) % nranks_);
    size_t recvSlot = static_cast<size_t>((rank_ - s - 1 + 2 * nranks_) % nranks_);
    BRAID_RETURN_IF_ERROR(
        sendTo(next, kAllGatherTag, base + sendSlot * sizePerRank, sizePerRank, deadline));
    BRAID_RETURN_IF_ERROR(
        recvFrom(prev, kAllGatherTag, base + recvSlot * sizePerRank, sizePerRank, deadline));
  }
  return Status::ok();
}

Status Bootstrap::barrier() {
  Deadline deadline(timeoutMs_);
  // Dissemination: after round k every rank has heard, directly or not, from
  // the 2^(k+1) - 1 ranks before it. The peers of different rounds differ, and
  // per-peer FIFO order keeps successive barriers apart.
  uint8_t token = 0;
  for (int k = 1; k < nranks_; k <<= 1) {
    BRAID_RETURN_IF_ERROR(sendTo((rank_ + k) % nranks_, kBarrierTag, &token, 1, deadline));
    BRAID_RETURN_IF_ERROR(recvFrom((rank_ - k + nranks_) % nranks_, kBarrierTag, &token, 1, deadline));
  }
  return Status::ok();
}

}  // namespace braid::bootstrap
