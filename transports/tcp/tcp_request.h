// TcpRequest: one isend / irecv in flight, and the parts it is split into.
//
// Requests come from a per-comm pool and go back to it when test() reports
// them, so the data path allocates nothing per message. A transport::Request*
// handed to the caller is a TcpRequest* (transport::Request is only a name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transports/tcp/frame.h"
#include "transports/transport.h"

namespace braid::tcp {

class TcpComm;
struct TcpRequest;

// One part of a message on one socket: header then payload.
struct Part {
  TcpRequest* req = nullptr;
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t done = 0;  // payload bytes moved
  uint8_t header[kFrameHeaderBytes] = {};
  size_t headerDone = 0;  // send: header bytes written; recv: kFrameHeaderBytes once checked
  uint16_t index = 0;
  Part* next = nullptr;  // in its socket's queue
};

// FIFO of parts, intrusive (no allocation).
struct PartQueue {
  Part* head = nullptr;
  Part* tail = nullptr;
  bool empty() const { return head == nullptr; }
  void push(Part* p) {
    p->next = nullptr;
    (tail ? tail->next : head) = p;
    tail = p;
  }
  void pop() {
    head = head->next;
    if (!head) tail = nullptr;
  }
};

struct TcpRequest : transport::Request {
  TcpComm* comm = nullptr;
  uint32_t seq = 0;
  uint32_t tag = 0;
  uint8_t* data = nullptr;
  size_t capacity = 0;  // send: size; recv: the posted capacity
  size_t total = 0;     // bytes of the message (recv: known once the lead header arrived)
  int nParts = 0;       // recv: 0 until the lead header arrived
  int partsLeft = 0;
  bool completed = false;  // all parts moved (and every earlier request too)
  TcpRequest* next = nullptr;  // in the comm's in-flight list or the pool's free list
  Part parts[kMaxSocks];
};

// Grow-only pool; requests are reused, never freed before the comm.
class RequestPool {
 public:
  TcpRequest* get() {
    if (!free_) {
      all_.push_back(std::make_unique<TcpRequest>());
      free_ = all_.back().get();
    }
    TcpRequest* r = free_;
    free_ = r->next;
    // The caller sets every field it uses; clear the ones it may not.
    r->total = 0, r->nParts = 0, r->partsLeft = 0, r->completed = false, r->next = nullptr;
    return r;
  }
  void put(TcpRequest* r) {
    r->next = free_;
    free_ = r;
  }

 private:
  std::vector<std::unique_ptr<TcpRequest>> all_;
  TcpRequest* free_ = nullptr;
};

}  // namespace braid::tcp
