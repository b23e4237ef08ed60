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

Stream::Stream() : staging_(std::make_unique<StreamStaging>()), worker_([this] { loop(); }) {}

Stream::~Stream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    pushes_.fetch_add(1, std::memory_order_release);  // ends an idle poll at once
    workQueued_.notify_all();
  }
  worker_.join();
}

void Stream::bindCuda(std::unique_ptr<CudaStreamOrder> order) { cudaOrder_ = std::move(order); }

template <typename... Args>
void Stream::push(Args&&... args) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.emplace(std::forward<Args>(args)...);
  pushes_.fetch_add(1, std::memory_order_release);
  if (workerAsleep_) workQueued_.notify_one();
}

void Stream::enqueue(std::shared_ptr<Communicator> comm, uint64_t ticket, Op&& op) {
  push(std::move(comm), ticket, coarseNowNs(), std::move(op));
}

void Stream::enqueue(std::function<Status()> closure) { push(std::move(closure)); }

void Stream::pollForWork(uint64_t pushesSeen) {
  const uint64_t until = nowNs() + kIdleSpinNs;
  for (unsigned i = 1; pushes_.load(std::memory_order_acquire) == pushesSeen; ++i) {
    cpuRelax();
    if (i % 64 == 0) {
      if (nowNs() >= until) return;
      sched_yield();  // a caller sharing this core gets it; on an idle core this returns at once
    }
  }
}

void Stream::loop() {
  nameThisThread("braid-stream");
  markEngineThread();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty() && !stopping_) {
      const uint64_t seen = pushes_.load(std::memory_order_relaxed);
      lock.unlock();
      pollForWork(seen);
      lock.lock();
      workerAsleep_ = true;
      workQueued_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      workerAsleep_ = false;
    }
    if (queue_.empty()) return;  // stopping, and everything queued has run
    // Run in place: the producer only appends, and never moves queued items.
    Work& work = queue_.front();
    running_ = true;
    lock.unlock();
    Status status = work.comm ? work.comm->run(work.ticket, work.op, work.queuedAtNs) : work.closure();
    // Release what the item held before reporting idle (and outside the lock:
    // this may be the communicator's last reference).
    work.comm.reset();
    work.closure = nullptr;
    lock.lock();
    queue_.pop();
    running_ = false;
    if (!status.isOk() && firstError_.isOk()) firstError_ = status;
    if (queue_.empty()) drained_.notify_all();
  }
}

Status Stream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  drained_.wait(lock, [&] { return queue_.empty() && !running_; });
  Status error = firstError_;
  firstError_ = Status::ok();
  return error;
}

Status Stream::query() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!firstError_.isOk()) return firstError_;
  if (!queue_.empty() || running_) return Status(Code::kInProgress, "stream has queued work");
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
