#include "transports/tcp/tcp_comm.h"

namespace braid::tcp {

TcpComm::TcpComm(std::vector<net::Fd> socks, std::string peer, std::shared_ptr<PollSet> pollSet)
    : peer_(std::move(peer)), pollSet_(std::move(pollSet)) {
  socks_.resize(socks.size());
  for (size_t i = 0; i < socks.size(); ++i) socks_[i].fd = std::move(socks[i]);
  pollSet_->add(this);
}

TcpComm::~TcpComm() { pollSet_->remove(this); }

TcpRequest* TcpComm::newRequest(uint32_t tag, void* data, size_t capacity) {
  TcpRequest* r = pool_.get();
  r->comm = this;
  r->seq = nextSeq_++;
  r->tag = tag;
  r->data = static_cast<uint8_t*>(data);
  r->capacity = capacity;
  (inflightTail_ ? inflightTail_->next : inflightHead_) = r;
  inflightTail_ = r;
  return r;
}

void TcpComm::retireCompleted() {
  while (inflightHead_ && inflightHead_->nParts > 0 && inflightHead_->partsLeft == 0) {
    inflightHead_->completed = true;
    inflightHead_ = inflightHead_->next;
  }
  if (!inflightHead_) inflightTail_ = nullptr;
}

Status TcpComm::fail(Status st) {
  if (failed_.isOk()) failed_ = st;
  for (Socket& s : socks_) s.queue = PartQueue();
  inflightHead_ = inflightTail_ = leadReq_ = nullptr;
  return failed_;
}

Status TcpComm::test(TcpRequest* req, bool* done, size_t* size) {
  *done = false;
  if (!req->completed && failed_.isOk()) {
    Status st = progress();
    if (!st.isOk()) (void)fail(std::move(st));
    retireCompleted();
  }
  if (req->completed) {
    *done = true;
    if (size) *size = req->total;
    pool_.put(req);
    return Status::ok();
  }
  if (!failed_.isOk()) {
    *done = true;
    pool_.put(req);
    return failed_;
  }
  return Status::ok();
}

Status TcpComm::closedByPeer(int sock) const {
  (void)sock;
  return remoteError("connection closed by peer " + peer_);
}

Status TcpComm::socketError(const char* call, int sock, int err) const {
  if (err == EPIPE || err == ECONNRESET || err == ENOTCONN || err == ETIMEDOUT) return closedByPeer(sock);
  return systemError(std::string(call) + " on tcp socket " + std::to_string(sock) + " of " +
                         std::to_string(socks_.size()) + " with peer " + peer_,
                     err);
}

}  // namespace braid::tcp
