#include "core/plan_cache.h"

namespace braid::core {

size_t PlanKeyHash::operator()(const PlanKey& k) const {
  // Looked up on every call: a few multiply-xorshift rounds over the fields
  // packed into five words, not a byte-at-a-time hash.
  const uint64_t words[5] = {uint64_t{k.collective} | uint64_t{k.dtype} << 8 | uint64_t{k.op} << 16 |
                                 uint64_t{k.variant} << 24 | uint64_t{k.codecHost} << 32 |
                                 uint64_t{k.preMultiply} << 40,
                             static_cast<uint32_t>(k.rootOrPeer), k.count,
                             uint64_t{k.codecBlock} | uint64_t{k.codecScaleBits} << 32, k.preMulScalar};
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t w : words) {
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  return static_cast<size_t>(h);
}

std::shared_ptr<const Plan> PlanCache::find(const PlanKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->plan;
}

void PlanCache::insert(const PlanKey& key, std::shared_ptr<const Plan> plan) {
  const size_t steps = plan->schedule.steps.size();
  if (steps > kMaxSteps) return;  // would evict everything else; built per call instead
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.count(key)) return;  // another thread built the same plan first
  lru_.push_front({key, std::move(plan)});
  index_[key] = lru_.begin();
  steps_ += steps;
  while (lru_.size() > kMaxEntries || steps_ > kMaxSteps) {
    steps_ -= lru_.back().plan->schedule.steps.size();
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

size_t PlanCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace braid::core
