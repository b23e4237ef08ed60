// PlanCache: the communicator's recent plans, by the shape of the call.
//
// A plan depends only on the call's shape (collective, count, dtype, op,
// root or peer, codec, PreMulSum's scalar), never on its buffers, and the tuner's pick is fixed
// per communicator, so a repeated call can reuse the plan of the first. Bounded
// by entries and by steps held (a 1 GiB ring on many ranks has tens of
// thousands of steps); the least recently used plans go first.
// Thread-safe: ops may be built on several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/plan.h"

namespace braid::core {

struct PlanKey {
  uint8_t collective = 0;
  uint8_t dtype = 0;
  uint8_t op = 0;
  uint8_t variant = 0;  // send / recv for point-to-point; the wire format + 1 when quantized
  int32_t rootOrPeer = -1;
  uint64_t count = 0;
  uint32_t codecBlock = 0;      // quantized only: fp8 block size
  uint32_t codecScaleBits = 0;  // quantized only: the loss scale's float bits
  uint8_t codecHost = 0;
  bool preMultiply = false;
  uint64_t preMulScalar = 0;  // PreMulSum's scalar: the scaling step carries it
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const;
};

class PlanCache {
 public:
  static constexpr size_t kMaxEntries = 64;
  static constexpr size_t kMaxSteps = size_t{1} << 18;

  std::shared_ptr<const Plan> find(const PlanKey& key);
  void insert(const PlanKey& key, std::shared_ptr<const Plan> plan);
  size_t size() const;

 private:
  struct Entry {
    PlanKey key;
    std::shared_ptr<const Plan> plan;
  };
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<PlanKey, std::list<Entry>::iterator, PlanKeyHash> index_;
  size_t steps_ = 0;
};

}  // namespace braid::core
