// ShmRequest: one isend / irecv in flight. From a per-comm pool, returned when
// test() reports it, so the data path allocates nothing per message. A
// transport::Request* handed to the caller is an ShmRequest*.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transports/transport.h"

namespace braid::shm {

class ShmComm;

struct ShmRequest : transport::Request {
  ShmComm* comm = nullptr;
  uint32_t seq = 0;
  uint32_t tag = 0;
  uint8_t* data = nullptr;
  size_t capacity = 0;      // send: size; recv: the posted capacity
  uint64_t total = 0;       // bytes of the message (recv: known once its header arrived)
  bool cma = false;         // moved by cross-memory attach, not through the ring
  uint64_t cmaIndex = 0;
  bool peerCopies = false;  // recv, CMA: the sender claimed the copy (it pushes)
  bool counted = false;     // in the process's pending copies (ShmComm::count)
  bool headerDone = false;  // its frame header is written / read
  uint64_t moved = 0;       // ring bytes of its payload moved (up to the padded size)
  bool finished = false;    // all bytes moved (send over CMA: the receiver acknowledged)
  bool completed = false;   // finished, and so is every earlier request
  ShmRequest* next = nullptr;
};

class RequestPool {
 public:
  ShmRequest* get() {
    if (!free_) {
      all_.push_back(std::make_unique<ShmRequest>());
      free_ = all_.back().get();
    }
    ShmRequest* r = free_;
    free_ = r->next;
    ShmComm* comm = r->comm;
    *r = ShmRequest();
    r->comm = comm;
    return r;
  }
  void put(ShmRequest* r) {
    r->next = free_;
    free_ = r;
  }

 private:
  std::vector<std::unique_ptr<ShmRequest>> all_;
  ShmRequest* free_ = nullptr;
};

}  // namespace braid::shm
