#include "core/fault_inject.h"

#include <signal.h>

#include <cstdlib>
#include <sstream>

#include "base/log.h"

namespace braid::core {
namespace {

Status closedLink(const std::string& spec, int peer) {
  return Status(Code::kSystemError, "the connection to rank " + std::to_string(peer) +
                                        " was closed under this rank (BRAID_FAULT_INJECT=" + spec + ")");
}

class ClosedSend : public transport::SendComm {
 public:
  ClosedSend(std::string spec, int peer) : spec_(std::move(spec)), peer_(peer) {}
  Status isend(const void*, size_t, uint32_t, void*, transport::Request**) override { return closedLink(spec_, peer_); }

 private:
  std::string spec_;
  int peer_;
};

class ClosedRecv : public transport::RecvComm {
 public:
  ClosedRecv(std::string spec, int peer) : spec_(std::move(spec)), peer_(peer) {}
  Status irecv(void*, size_t, uint32_t, void*, transport::Request**) override { return closedLink(spec_, peer_); }

 private:
  std::string spec_;
  int peer_;
};

// Flips bits of the tag of the first message it sends, then passes through.
class CorruptingSend : public transport::SendComm {
 public:
  explicit CorruptingSend(std::unique_ptr<transport::SendComm> inner) : inner_(std::move(inner)) {}
  Status isend(const void* data, size_t size, uint32_t tag, void* mh, transport::Request** req) override {
    if (!done_) tag ^= 0x00a5a5a5u;
    done_ = true;
    return inner_->isend(data, size, tag, mh, req);
  }

 private:
  std::unique_ptr<transport::SendComm> inner_;
  bool done_ = false;
};

}  // namespace

Status FaultInjection::parse(const std::string& spec, FaultInjection* out) {
  FaultInjection f;
  f.spec = spec;
  if (spec.empty()) {
    *out = f;
    return Status::ok();
  }
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    const bool isNumber = !value.empty() && *end == '\0' && number >= 0;
    if (key == "kind") {
      if (value == "close-socket") f.kind = Kind::kCloseSocket;
      else if (value == "corrupt-header") f.kind = Kind::kCorruptHeader;
      else if (value == "kill") f.kind = Kind::kKill;
      else if (value == "stop") f.kind = Kind::kStop;
      else return invalidArgument("BRAID_FAULT_INJECT: unknown kind '" + value + "' (close-socket, corrupt-header, kill, stop)");
    } else if ((key == "rank" || key == "op" || key == "peer") && isNumber) {
      if (key == "rank") f.rank = static_cast<int>(number);
      else if (key == "peer") f.peer = static_cast<int>(number);
      else f.op = static_cast<uint64_t>(number);
    } else {
      return invalidArgument("BRAID_FAULT_INJECT: bad item '" + item + "' in '" + spec +
                             "' (expected rank=R,op=N,kind=K[,peer=P])");
    }
  }
  if (f.kind == Kind::kNone || f.rank < 0 || f.op == 0)
    return invalidArgument("BRAID_FAULT_INJECT='" + spec + "' needs rank=, op= (from 1) and kind=");
  *out = f;
  return Status::ok();
}

Status FaultInjection::apply(int nranks, Connections& connections) const {
  const int peer = this->peer >= 0 ? this->peer : (rank + 1) % nranks;
  if (peer >= nranks || peer == rank)
    return invalidArgument("BRAID_FAULT_INJECT: peer " + std::to_string(peer) + " is not another rank");
  BRAID_WARN("BRAID_FAULT_INJECT=%s: injecting the fault now", spec.c_str());
  PeerLink& link = connections.peers[static_cast<size_t>(peer)];
  switch (kind) {
    case Kind::kCloseSocket:
      link.send = std::make_unique<ClosedSend>(spec, peer);  // the real comms (and sockets) close here
      link.recv = std::make_unique<ClosedRecv>(spec, peer);
      break;
    case Kind::kCorruptHeader:
      link.send = std::make_unique<CorruptingSend>(std::move(link.send));
      break;
    case Kind::kKill:
      raise(SIGKILL);
      break;
    case Kind::kStop:
      raise(SIGSTOP);
      break;
    case Kind::kNone:
      break;
  }
  return Status::ok();
}

}  // namespace braid::core
