#include "core/stream.h"

#include <sched.h>

#include "base/cpu.h"
#include "base/deadline.h"
#include "base/thread_name.h"
#include "core/communicator.h"
#include "core/device_staging.h"
#include "core/engine_thread.h"

namespace braid::core {

namespace {

// How long a worker whose queue ran dry polls for more before it sleeps. A
// caller queuing collectives back to back pushes again within this, and
// then neither pays a futex wake; nor, on a core the two threads share, the
// switch per op that waking a sleeper costs (the woken worker preempts the
// caller, runs the one op, sleeps, and the caller resumes: 0.4 us an op on
// this VM, twice the op). The poll yields, so a caller on the same core runs
// on and queues a batch meanwhile.
constexpr uint64_t kIdleSpinNs = 50000;

}  // namespace

Stream::Stream() : Stream(Limits{}) {}

Stream::Stream(Limits limits)
    : limits_(limits), staging_(std::make_unique<StreamStaging>()), worker_([this] { loop(); }) {}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true, std::memory_order_seq_cst);
    workQueued_.notify_all();
  }
  worker_.join();
}

void Stream::bindCuda(std::unique_ptr<CudaStreamOrder> order) { cudaOrder_ = std::move(order); }

template <typename... Args>
void Stream::push(Args&&... args) {
  {
    std::lock_guard<std::mutex> lock(pushMu_);
    // popped() is read again only when the count seen last leaves no room:
    // the worker writes it on every pop, and reading it on every push would
    // pull its line across cores twice an op.
    if (queue_.pushed() - poppedSeen_ >= limits_.queuedItems) {
      poppedSeen_ = queue_.popped();
      if (queue_.pushed() - poppedSeen_ >= limits_.queuedItems && poppedSeen_ != stalledAt_) waitForRoom();
    }
    queue_.emplace(std::forward<Args>(args)...);
  }
  // The push's store and this load are both sequentially consistent, as are
  // the worker's announcement of its sleep and its check for work after it:
  // one of the two sides sees the other. Waking takes mu_, which the worker
  // holds from that check until it waits, so the notify cannot fall between.
  if (workerAsleep_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mu_);
    workQueued_.notify_one();
  }
}

void Stream::enqueue(std::shared_ptr<Communicator> comm, uint64_t ticket, Op&& op) {
  push(std::move(comm), ticket, coarseNowNs(), std::move(op));
}

void Stream::enqueue(std::function<Status()> closure) { push(std::move(closure)); }

void Stream::pollForWork(uint64_t pushesSeen) {
  const uint64_t until = nowNs() + kIdleSpinNs;
  for (unsigned i = 1; queue_.pushed() == pushesSeen && !stopping_.load(std::memory_order_relaxed); ++i) {
    cpuRelax();
    if (i % 64 == 0) {
      if (nowNs() >= until) return;
      sched_yield();  // a caller sharing this core gets it; on an idle core this returns at once
    }
  }
}

void Stream::sleepForWork() {
  std::unique_lock<std::mutex> lock(mu_);
  workerAsleep_.store(true, std::memory_order_seq_cst);
  workQueued_.wait(
      lock, [&] { return queue_.pushed() != queue_.popped() || stopping_.load(std::memory_order_seq_cst); });
  workerAsleep_.store(false, std::memory_order_relaxed);
}

void Stream::waitForRoom() {
  // The worker wakes synchronizers when popped() reaches wakeAt_; a caller
  // waiting for room is one, for the mark at half the bound: it sleeps once
  // per queuedItems / 2 ops, not once per op.
  const uint64_t mark = queue_.pushed() - limits_.queuedItems / 2;
  std::unique_lock<std::mutex> lock(mu_);
  while (queue_.popped() < mark) {
    const uint64_t before = queue_.popped();
    wakeMeAt(mark);
    if (queue_.popped() >= mark) break;
    if (drained_.wait_for(lock, std::chrono::milliseconds(limits_.stalledWaitMs)) ==
            std::cv_status::timeout &&
        queue_.popped() == before) {
      stalledAt_ = before;  // the worker is held up: queue on, until it moves
      return;
    }
  }
  poppedSeen_ = queue_.popped();
}

void Stream::keepError(const Status& status) {
  std::lock_guard<std::mutex> lock(errorMu_);
  if (firstError_.isOk()) firstError_ = status;
}

void Stream::wakeMeAt(uint64_t mark) {
  uint64_t current = wakeAt_.load(std::memory_order_relaxed);
  while (mark < current && !wakeAt_.compare_exchange_weak(current, mark, std::memory_order_seq_cst)) {
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);  // also when the lower mark of another waiter stays
}

void Stream::loop() {
  nameThisThread("braid-stream");
  markEngineThread();
  for (;;) {
    Work* work = queue_.front();
    if (work == nullptr) {
      // The destructor runs after every push it waits for, so stopping_
      // seen here means the queue has nothing more to come.
      if (stopping_.load(std::memory_order_acquire)) {
        if (queue_.front() == nullptr) return;
        continue;
      }
      const uint64_t seen = queue_.popped();  // the queue is empty: this is pushed() too
      pollForWork(seen);
      if (queue_.pushed() == seen) sleepForWork();
      continue;
    }
    // Run in place: the producer only appends, and never moves queued items.
    Status status = work->comm ? work->comm->run(work->ticket, work->op, work->queuedAtNs) : work->closure();
    // Release what the item held before counting it done (this may be the
    // communicator's last reference), and keep an error before that too, so
    // a synchronizer that sees the count sees the error.
    work->comm.reset();
    work->closure = nullptr;
    if (!status.isOk()) keepError(status);
    queue_.pop();
    // pop()'s store and this load are sequentially consistent, as are a
    // synchronizer's setting of wakeAt_ and its check of popped() after it.
    if (queue_.popped() >= wakeAt_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mu_);
      wakeAt_.store(kNobodyWaits, std::memory_order_relaxed);
      drained_.notify_all();
    }
  }
}

Status Stream::synchronize() {
  const uint64_t mark = queue_.pushed();
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (queue_.popped() < mark) {
      wakeMeAt(mark);
      if (queue_.popped() >= mark) break;
      drained_.wait(lock);
    }
  }
  std::lock_guard<std::mutex> lock(errorMu_);
  Status error = firstError_;
  firstError_ = Status::ok();
  return error;
}

Status Stream::query() {
  {
    std::lock_guard<std::mutex> lock(errorMu_);
    if (!firstError_.isOk()) return firstError_;
  }
  if (queue_.popped() != queue_.pushed()) return Status(Code::kInProgress, "stream has queued work");
  return Status::ok();
}

void Event::record(Stream& stream) {
  std::shared_ptr<State> state = state_;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    generation = ++state->recorded;
  }
  stream.enqueue([state, generation]() {
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->reached < generation) state->reached = generation;
    state->cv.notify_all();
    return Status::ok();
  });
}

bool Event::reached() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->reached >= state_->recorded;
}

void Event::synchronize() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->reached >= state_->recorded; });
}

}  // namespace braid::core
