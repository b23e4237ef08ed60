// Op: one launch on a communicator: a plan (its schedule, prepared) plus the
// buffers it runs over.
// A single collective has buffers {input, output}; a fused group has two per
// member op (see algo::Schedule::append).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "algorithms/collective.h"
#include "core/executor.h"
#include "core/plan.h"
#include "core/slot_collectives.h"

namespace braid::core {

// The buffers an op runs over. The common single op's two are held inline so
// that a call allocates nothing; a fused group's list moves to the heap.
class BufferList {
 public:
  BufferList() = default;
  BufferList(BufferBinding input, BufferBinding output) : pair_{input, output}, size_(2) {}
  void append(std::span<const BufferBinding> more) {
    if (more.empty()) return;
    if (heap_.empty()) heap_.assign(pair_.begin(), pair_.begin() + static_cast<std::ptrdiff_t>(size_));
    heap_.insert(heap_.end(), more.begin(), more.end());
    size_ = heap_.size();
  }
  std::span<const BufferBinding> view() const {
    return heap_.empty() ? std::span<const BufferBinding>(pair_.data(), size_)
                         : std::span<const BufferBinding>(heap_);
  }
  const BufferBinding& operator[](size_t i) const { return view()[i]; }
  // For rebinding an op's buffers after it was built (device_staging.cc
  // builds ops over staging memory that is only taken when they run).
  std::span<BufferBinding> mutableView() {
    return heap_.empty() ? std::span<BufferBinding>(pair_.data(), size_) : std::span<BufferBinding>(heap_);
  }
  size_t size() const { return size_; }

 private:
  std::array<BufferBinding, 2> pair_{};
  std::vector<BufferBinding> heap_;
  size_t size_ = 0;
};

struct Op {
  algo::Collective collective = algo::Collective::kAllReduce;
  // What the user asked for, for the flight recorder and error messages.
  DataType dtype = DataType::kUint8;
  size_t count = 0;
  int rootOrPeer = -1;
  RedOp redOp = RedOp::kSum;
  bool preMultiply = false;  // PreMulSum, with this rank's scalar (algo::CollectiveArgs)
  uint64_t preMulScalar = 0;
  // kNone: the executor runs the plan. Else the op runs on the communicator's
  // shared slots (slot_collectives.h) and has no plan: the communicator's
  // planOf() names it for the flight recorder, with no reference to count.
  SlotPath slotPath = SlotPath::kNone;
  std::shared_ptr<const Plan> plan;  // shared with the communicator's plan cache
  BufferList buffers;
};

}  // namespace braid::core
