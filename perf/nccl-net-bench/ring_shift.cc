#include "ring_shift.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <deque>

namespace braid::netbench {
namespace {

using Clock = std::chrono::steady_clock;

std::string failed(const char* call, ncclResult_t r) {
  return std::string(call) + " returned ncclResult_t " + std::to_string(r);
}

// One direction of the shift: chunks posted in order, at most plan.depth
// outstanding, retired in order (a connection completes in order).
struct Lane {
  size_t next = 0;      // first byte not yet posted
  bool posted = false;  // a zero-byte message still counts as one chunk
  std::deque<void*> inFlight;
};

}  // namespace

std::string connectRing(const netplugin::NetApi& net, int dev, void* nextHandle, RingLinks* links,
                        int timeoutMs) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  while (!links->send || !links->recv) {
    if (Clock::now() > deadline) return "the ring's connections were not set up in time";
    if (!links->send)
      if (ncclResult_t r = net.connect(dev, nextHandle, &links->send); r != ncclSuccess)
        return failed("connect", r);
    if (!links->recv)
      if (ncclResult_t r = net.accept(links->listen, &links->recv); r != ncclSuccess)
        return failed("accept", r);
  }
  return "";
}

void closeRing(const netplugin::NetApi& net, RingLinks* links) {
  if (links->send) net.closeSend(links->send);
  if (links->recv) net.closeRecv(links->recv);
  if (links->listen) net.closeListen(links->listen);
  *links = {};
}

std::string shift(const netplugin::NetApi& net, const RingLinks& links, const ShiftPlan& plan,
                  const uint8_t* send, uint8_t* recv, size_t bytes, void* sendMr, void* recvMr,
                  int timeoutMs) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  Lane out, in;
  auto morePosts = [&](const Lane& lane) { return lane.next < bytes || (!lane.posted); };
  while (morePosts(out) || morePosts(in) || !out.inFlight.empty() || !in.inFlight.empty()) {
    if (Clock::now() > deadline) return "the shift did not finish in time";
    while (morePosts(in) && static_cast<int>(in.inFlight.size()) < plan.depth) {
      size_t size = std::min(plan.chunkBytes, bytes - in.next);
      void* data = recv + in.next;
      int tag = plan.recvTag;
      void* request = nullptr;
      if (ncclResult_t r = net.irecv(links.recv, 1, &data, &size, &tag, &recvMr, &request); r != ncclSuccess)
        return failed("irecv", r);
      if (!request) break;  // the plugin asks us to come back later
      in.inFlight.push_back(request);
      in.next += size;
      in.posted = true;
    }
    while (morePosts(out) && static_cast<int>(out.inFlight.size()) < plan.depth) {
      size_t size = std::min(plan.chunkBytes, bytes - out.next);
      void* request = nullptr;
      if (ncclResult_t r = net.isend(links.send, const_cast<uint8_t*>(send) + out.next, size, plan.sendTag,
                                     sendMr, &request);
          r != ncclSuccess)
        return failed("isend", r);
      if (!request) break;
      out.inFlight.push_back(request);
      out.next += size;
      out.posted = true;
    }
    bool progressed = false;
    for (Lane* lane : {&in, &out}) {
      while (!lane->inFlight.empty()) {
        int done = 0, size = 0;
        if (ncclResult_t r = net.test(lane->inFlight.front(), &done, &size); r != ncclSuccess)
          return failed("test", r);
        if (!done) break;
        lane->inFlight.pop_front();
        progressed = true;
      }
    }
    // As NCCL's proxy thread, which yields when a pass found nothing to do:
    // ranks sharing cores (a fabric on a small machine) leave each other time.
    if (!progressed) sched_yield();
  }
  return "";
}

}  // namespace braid::netbench
