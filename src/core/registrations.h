// Registrations: the buffers braidCommRegister gave a communicator, each
// registered with those of its transports that gain from it
// (Capabilities::registersMemory: ibverbs), so that the executor hands their
// handles to isend / irecv and a training loop's buffers are pinned once
// rather than at every message.
//
// Threads: add() and remove() come from any user thread while ops run on
// others. Ops read an immutable table (snapshot()), so a running op never
// takes a lock per message, and a range removed while an op still holds the
// table is deregistered when that op lets go of it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "base/address_range.h"
#include "base/status.h"
#include "transports/transport.h"

namespace braid::core {

class Registrations {
 public:
  // One registered range and what each transport made of it.
  class Range {
   public:
    Range(uintptr_t begin, size_t size) : begin_(begin), size_(size) {}
    ~Range();  // deregisters with every transport that registered it
    Range(const Range&) = delete;
    Range& operator=(const Range&) = delete;

    bool covers(const void* data, size_t bytes) const { return rangeCovers(begin_, size_, data, bytes); }
    // This range's handle with `transport` (null: it registered nothing).
    void* handleFor(const transport::Transport* transport) const {
      for (const auto& [t, handle] : handles_)
        if (t == transport) return handle;
      return nullptr;
    }

   private:
    friend class Registrations;
    uintptr_t begin_;
    size_t size_;
    std::vector<std::pair<transport::Transport*, void*>> handles_;
  };
  using Table = std::vector<std::shared_ptr<const Range>>;

  // The communicator's transports; they must outlive this object.
  explicit Registrations(std::vector<transport::Transport*> transports);

  // Registers [data, data + size) with every transport that registers
  // memory; *handle identifies it to remove(). Overlapping ranges are
  // allowed (each is its own registration).
  Status add(void* data, size_t size, void** handle);
  // Ends a registration add() made; an unknown handle changes nothing.
  Status remove(void* handle);
  // Registers memory of braid's own (the executor's staging) the same way,
  // outside the table: the range deregisters when the last holder drops it.
  Status registerOwn(void* data, size_t size, std::shared_ptr<const Range>* out);
  // Whether any transport registers memory (else add() records ranges only).
  bool registersAny() const { return !registering_.empty(); }
  // The ranges now registered; null when there are none (one relaxed load).
  std::shared_ptr<const Table> snapshot() const;
  size_t count() const { return count_.load(std::memory_order_relaxed); }

  // The handle for a message of `bytes` at `data` over `transport`: that of
  // the first range covering it, else null. Few ranges are usual (a model's
  // buffers), so a scan.
  static void* find(const Table& table, const transport::Transport* transport, const void* data,
                    size_t bytes) {
    for (const auto& range : table)
      if (range->covers(data, bytes))
        if (void* handle = range->handleFor(transport)) return handle;
    return nullptr;
  }

 private:
  std::vector<transport::Transport*> registering_;  // the transports that register memory
  mutable std::mutex mu_;
  std::shared_ptr<const Table> table_;  // guarded by mu_; replaced, never changed
  std::atomic<size_t> count_{0};
};

}  // namespace braid::core
