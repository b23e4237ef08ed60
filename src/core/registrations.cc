#include "core/registrations.h"

#include <algorithm>
#include <string>

#include "base/log.h"

namespace braid::core {

Registrations::Range::~Range() {
  for (const auto& [transport, handle] : handles_) {
    Status st = transport->deregMr(handle);
    if (!st.isOk())
      BRAID_WARN("%s: deregistering a buffer failed: %s", transport->name(), st.message().c_str());
  }
}

Registrations::Registrations(std::vector<transport::Transport*> transports) {
  for (transport::Transport* t : transports)
    if (t->capabilities().registersMemory) registering_.push_back(t);
}

Status Registrations::registerOwn(void* data, size_t size, std::shared_ptr<const Range>* out) {
  out->reset();
  auto range = std::make_shared<Range>(reinterpret_cast<uintptr_t>(data), size);
  for (transport::Transport* t : registering_) {
    void* mhandle = nullptr;
    Status st = t->regMr(data, size, &mhandle);
    if (!st.isOk()) return st;  // range's destructor undoes the transports before this one
    if (mhandle != nullptr) range->handles_.emplace_back(t, mhandle);
  }
  *out = std::move(range);
  return Status::ok();
}

Status Registrations::add(void* data, size_t size, void** handle) {
  *handle = nullptr;
  std::shared_ptr<const Range> range;
  BRAID_RETURN_IF_ERROR(registerOwn(data, size, &range));
  std::lock_guard<std::mutex> lock(mu_);
  auto table = table_ ? std::make_shared<Table>(*table_) : std::make_shared<Table>();
  table->push_back(range);
  table_ = std::move(table);
  count_.store(table_->size(), std::memory_order_relaxed);
  *handle = const_cast<Range*>(range.get());  // only ever compared, in remove()
  return Status::ok();
}

Status Registrations::remove(void* handle) {
  std::shared_ptr<const Range> removed;  // deregistered after the lock, once no op holds it
  std::lock_guard<std::mutex> lock(mu_);
  const Table empty;
  const Table& now = table_ ? *table_ : empty;
  auto it = std::find_if(now.begin(), now.end(), [&](const auto& r) { return r.get() == handle; });
  if (it == now.end())
    return invalidArgument("the handle is not a registration of this communicator (or was deregistered)");
  auto table = std::make_shared<Table>(*table_);
  table->erase(table->begin() + (it - table_->begin()));
  removed = *it;
  table_ = table->empty() ? nullptr : std::move(table);
  count_.store(table_ ? table_->size() : 0, std::memory_order_relaxed);
  return Status::ok();
}

std::shared_ptr<const Registrations::Table> Registrations::snapshot() const {
  if (count_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return table_;
}

}  // namespace braid::core
