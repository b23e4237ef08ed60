#include "core/stream.h"

#include "core/communicator.h"
#include "core/device_staging.h"
#include "core/engine_thread.h"

namespace braid::core {

Stream::Stream() : staging_(std::make_unique<StreamStaging>()), worker_([this] { loop(); }) {}

Stream::~Stream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    workQueued_.notify_all();
  }
  worker_.join();
}

void Stream::bindCuda(std::unique_ptr<CudaStreamOrder> order) { cudaOrder_ = std::move(order); }

void Stream::enqueue(std::shared_ptr<Communicator> comm, uint64_t ticket, Op&& op) {
  Work work;
  work.comm = std::move(comm);
  work.ticket = ticket;
  work.op = std::move(op);
  push(std::move(work));
}

void Stream::enqueue(std::function<Status()> closure) {
  Work work;
  work.closure = std::move(closure);
  push(std::move(work));
}

void Stream::push(Work&& work) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push(std::move(work));
  if (queue_.size() == 1) workQueued_.notify_one();  // the worker only sleeps on an empty queue
}

void Stream::loop() {
  markEngineThread();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    workQueued_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    // Run in place: the producer only appends, and never moves queued items.
    Work& work = queue_.front();
    running_ = true;
    lock.unlock();
    Status status = work.comm ? work.comm->run(work.ticket, work.op) : work.closure();
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
