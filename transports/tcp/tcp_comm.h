// TcpComm: what both directions of a TCP connection share: its sockets, the
// requests in flight (in posting order), the request pool and the failure
// state. TcpSendComm / TcpRecvComm (tcp_send.cc, tcp_recv.cc) add the data path.
//
// Progress happens only inside test() (and the poll in TcpTransport::wait()).
// Requests complete in posting order. After an error the comm is dead: every
// request still in flight and every new one fails with that error, because the
// byte streams can no longer be trusted to be in step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "transports/net/socket.h"
#include "transports/tcp/poll_set.h"
#include "transports/tcp/tcp_request.h"
#include "transports/transport.h"

namespace braid::tcp {

class TcpComm : public Pollable {
 public:
  TcpComm(std::vector<net::Fd> socks, std::string peer, std::shared_ptr<PollSet> pollSet);
  ~TcpComm() override;
  TcpComm(const TcpComm&) = delete;
  TcpComm& operator=(const TcpComm&) = delete;

  // Transport::test for a request of this comm.
  Status test(TcpRequest* req, bool* done, size_t* size);
  int nSocks() const { return static_cast<int>(socks_.size()); }
  const std::string& peer() const { return peer_; }

 protected:
  struct Socket {
    net::Fd fd;
    PartQueue queue;  // parts to move on this socket, in message order
    // Receive side only: bytes read ahead of the current part (headers and
    // small payloads come in with one recv; large payloads bypass it).
    std::unique_ptr<uint8_t[]> staging;
    size_t begin = 0, end = 0;
  };

  // Moves as many bytes as the sockets take now.
  virtual Status progress() = 0;

  TcpRequest* newRequest(uint32_t tag, void* data, size_t capacity);
  // Marks finished requests at the head of the in-flight list completed.
  void retireCompleted();
  // Records the first error, drops all queued work; returns the error.
  Status fail(Status st);
  Status closedByPeer(int sock) const;
  Status socketError(const char* call, int sock, int err) const;

  std::vector<Socket> socks_;
  std::string peer_;
  Status failed_;
  uint32_t nextSeq_ = 0;
  TcpRequest* inflightHead_ = nullptr;
  TcpRequest* inflightTail_ = nullptr;
  // Receive side: the first posted request whose lead header has not arrived
  // yet (lead headers are read strictly in message order).
  TcpRequest* leadReq_ = nullptr;

 private:
  RequestPool pool_;
  std::shared_ptr<PollSet> pollSet_;
};

class TcpSendComm final : public transport::SendComm, public TcpComm {
 public:
  using TcpComm::TcpComm;
  Status isend(const void* data, size_t size, uint32_t tag, void* mhandle, transport::Request** req) override;
  bool addPollFds(std::vector<pollfd>* fds) const override;

 private:
  Status progress() override;
  Status pushSocket(int s);
};

class TcpRecvComm final : public transport::RecvComm, public TcpComm {
 public:
  TcpRecvComm(std::vector<net::Fd> socks, std::string peer, std::shared_ptr<PollSet> pollSet);
  Status irecv(void* data, size_t capacity, uint32_t tag, void* mhandle, transport::Request** req) override;
  bool addPollFds(std::vector<pollfd>* fds) const override;

 private:
  Status progress() override;
  Status pullSocket(int s, bool* moved);
  // Ensures a whole frame header is staged on socket s; *ready false when the
  // bytes are not there yet.
  Status stageHeader(int s, bool* ready);
  Status acceptLeadHeader(int s, const FrameHeader& h);
  Status checkPartHeader(int s, const FrameHeader& h, const Part& p);
  int leadSocket() const { return leadReq_ ? static_cast<int>(leadReq_->seq % socks_.size()) : -1; }
};

}  // namespace braid::tcp
