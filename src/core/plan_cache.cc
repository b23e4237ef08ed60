#include "core/plan_cache.h"

namespace braid::core {

size_t PlanKeyHash::operator()(const PlanKey& k) const {
  // FNV-1a over the fields: a handful of live keys, any decent mix will do.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(uint64_t{k.collective} | uint64_t{k.dtype} << 8 | uint64_t{k.op} << 16 | uint64_t{k.variant} << 24 |
      uint64_t{k.codecHost} << 32);
  mix(static_cast<uint32_t>(k.rootOrPeer));
  mix(k.count);
  mix(uint64_t{k.codecBlock} | uint64_t{k.codecScaleBits} << 32);
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
