// Stream: an in-order queue of work run by one worker thread, so a caller can
// issue collectives and go on computing (MegaScale-style overlap on CPUs).
// Event: a marker in a stream that reports when everything before it is done.
//
// A work item is an op of a communicator, or any closure that returns a
// Status (event markers); the first error is kept and returned by
// synchronize() (then cleared) and query(). An item owns what it needs (a
// shared_ptr to its communicator), so a stream may outlive the objects its
// callers freed after synchronizing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "base/segmented_queue.h"
#include "base/status.h"
#include "core/op.h"

namespace braid::core {

class Communicator;
class CudaStreamOrder;
class StreamStaging;

class Stream {
 public:
  // How far a caller may queue ahead of the worker. Past queuedItems it waits
  // until half of them have run, as CUDA's launch queue blocks its caller: the
  // queue's memory stays a few hundred KB, recycled and warm, and a caller on
  // the worker's core gives it the core instead of faulting in heap for work
  // that cannot run yet (a 200000-op burst of 8 B all-reduces was 40 MB of
  // fresh pages, a third of the callers' CPU time on the 2-core VM).
  // It waits only while the worker moves: a queued op may wait on a peer
  // whose matching call this caller has yet to make (on another stream, or
  // inline), an order an unbounded queue lets run. A wait in which the worker
  // ran nothing for stalledWaitMs ends, and the queue grows past the bound
  // until the worker moves again.
  struct Limits {
    uint64_t queuedItems = 1024;  // at least 1
    int stalledWaitMs = 5;
  };
  Stream();
  explicit Stream(Limits limits);
  ~Stream();  // waits for queued work, then stops the worker
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs comm->run(ticket, op) in its turn. The op is held by value in the
  // queue, whose segments are recycled: a stream of small collectives
  // allocates nothing per op.
  void enqueue(std::shared_ptr<Communicator> comm, uint64_t ticket, Op&& op);
  void enqueue(std::function<Status()> work);
  // Blocks until everything queued before the call has run; returns and
  // clears the first error.
  Status synchronize();
  // Ok when idle, InProgress while work is queued or running, else the error.
  Status query();
  // A stream bound to a CUDA stream (braidStreamWrapCuda) holds the binding,
  // which its queued ops use until the destructor has run them.
  void bindCuda(std::unique_ptr<CudaStreamOrder> order);
  CudaStreamOrder* cudaOrder() const { return cudaOrder_.get(); }
  // Staging memory for device buffers, shared by this stream's ops.
  StreamStaging& staging() { return *staging_; }

 private:
  void loop();

  // Work reaches the worker through a lock-free queue (queue_); the mutex and
  // conditions below are only for sleeping: a worker with nothing to do, a
  // synchronizer waiting for the worker to get past its mark.
  std::mutex mu_;
  std::condition_variable workQueued_;  // the worker waits for work
  std::condition_variable drained_;     // synchronizers wait for the worker to pass their mark
  struct Work {
    Work(std::shared_ptr<Communicator>&& c, uint64_t t, uint64_t at, Op&& o)
        : comm(std::move(c)), ticket(t), queuedAtNs(at), op(std::move(o)) {}
    explicit Work(std::function<Status()>&& f) : closure(std::move(f)) {}
    std::shared_ptr<Communicator> comm;  // an op: comm->run(ticket, op)
    uint64_t ticket = 0;
    uint64_t queuedAtNs = 0;  // for the flight recorder, which records the op when it runs
    Op op;
    std::function<Status()> closure;  // anything else (comm is null)
  };
  // Queues a Work built in place from `args` (an op is moved once, from the
  // caller's Op into the queue: this is on every stream call's path).
  template <typename... Args>
  void push(Args&&... args);
  // Polls (yielding) until something is pushed after `pushesSeen`, or a short while.
  void pollForWork(uint64_t pushesSeen);
  // Sleeps until there is work or the stream stops.
  void sleepForWork();
  // Caller, under pushMu_: waits while the queue is full and the worker
  // moves (Limits).
  void waitForRoom();
  void keepError(const Status& status);
  // Lowers wakeAt_ to `mark` (under mu_).
  void wakeMeAt(uint64_t mark);

  // Callers push under pushMu_ (the queue takes one producer at a time); the
  // worker never takes it.
  const Limits limits_;
  alignas(64) std::mutex pushMu_;
  SegmentedQueue<Work> queue_;
  // Under pushMu_: popped() when a caller last read it, and when a wait for
  // room last found the worker held up.
  uint64_t poppedSeen_ = 0;
  uint64_t stalledAt_ = ~uint64_t{0};
  // Read on every push and every pop, written seldom: a line of their own.
  alignas(64) std::atomic<bool> workerAsleep_{false};  // waiting on workQueued_: a push must notify
  // The lowest mark a synchronizer waits for: the worker notifies drained_
  // when popped() reaches it (not on every pop, which would wake a waiter
  // per op of a burst), and resets it; woken waiters short of their mark
  // set it again.
  std::atomic<uint64_t> wakeAt_{kNobodyWaits};
  std::atomic<bool> stopping_{false};
  static constexpr uint64_t kNobodyWaits = ~uint64_t{0};
  std::mutex errorMu_;
  Status firstError_;
  std::unique_ptr<CudaStreamOrder> cudaOrder_;
  std::unique_ptr<StreamStaging> staging_;
  std::thread worker_;
};

// Shared state between an Event handle and the stream marker that completes it.
class Event {
 public:
  // Records: the event completes when the stream reaches this point.
  void record(Stream& stream);
  bool reached();
  void synchronize();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    uint64_t recorded = 0;  // generation of the latest record
    uint64_t reached = 0;   // latest generation the stream got past
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace braid::core
