// Stream: an in-order queue of work run by one worker thread, so a caller can
// issue collectives and go on computing (MegaScale-style overlap on CPUs).
// Event: a marker in a stream that reports when everything before it is done.
//
// Work items are closures that return a Status; the first error is kept and
// returned by synchronize() (then cleared) and query(). A closure owns what it
// needs (e.g. a shared_ptr to its communicator), so a stream may outlive the
// objects its callers freed after synchronizing.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "base/status.h"

namespace braid::core {

class Stream {
 public:
  Stream();
  ~Stream();  // waits for queued work, then stops the worker
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void enqueue(std::function<Status()> work);
  // Blocks until the queue is empty and idle; returns and clears the first error.
  Status synchronize();
  // Ok when idle, InProgress while work is queued or running, else the error.
  Status query();

 private:
  void loop();

  std::mutex mu_;
  // Two conditions, so that finishing one op of many wakes nobody: the worker
  // waits for work, synchronizers wait for the queue to drain.
  std::condition_variable workQueued_;
  std::condition_variable drained_;
  std::deque<std::function<Status()>> queue_;
  bool running_ = false;  // an item is executing
  bool stopping_ = false;
  Status firstError_;
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
