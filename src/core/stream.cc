#include "core/stream.h"

#include "core/engine_thread.h"

namespace braid::core {

Stream::Stream() : worker_([this] { loop(); }) {}

Stream::~Stream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    workQueued_.notify_all();
  }
  worker_.join();
}

void Stream::enqueue(std::function<Status()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(work));
  if (queue_.size() == 1) workQueued_.notify_one();  // the worker only sleeps on an empty queue
}

void Stream::loop() {
  markEngineThread();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    workQueued_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    std::function<Status()> work = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    Status status = work();
    work = nullptr;  // release what the closure held before reporting idle
    lock.lock();
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
