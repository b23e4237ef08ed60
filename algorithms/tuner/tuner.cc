#include "algorithms/tuner/tuner.h"

#include <bit>
#include <cstdio>

#include "base/log.h"

namespace braid::algo {

TunerConfig TunerConfig::make(int nranks, int ranksPerHost, const LinkSettings& link, size_t fixedChunkBytes,
                              size_t fallbackChunkBytes, bool sharedMemory) {
  TunerConfig c;
  c.nranks = nranks;
  c.params = link.costParams(ranksPerHost, sharedMemory);
  c.modelEnabled = link.modelEnabled();
  c.fixedChunkBytes = fixedChunkBytes;
  c.fallbackChunkBytes = fallbackChunkBytes;
  return c;
}

int Tuner::bucketOf(size_t bytes) { return bytes <= 1 ? 0 : std::bit_width(bytes - 1); }

size_t Tuner::bucketBytes(int bucket) {
  return bucket >= static_cast<int>(sizeof(size_t) * 8) ? SIZE_MAX : size_t(1) << bucket;
}

size_t Tuner::cachedPicks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

Pick Tuner::pick(Collective c, size_t bytes, const AlgorithmOverrides& overrides) {
  const Algorithm* forced = overrides.forced(c, bytes);
  const int bucket = bucketOf(bytes);
  const auto key = std::make_tuple(static_cast<int>(c), bucket, forced);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  // Decided outside the lock: two threads may both decide, identically.
  Pick p = decide(c, bucketBytes(bucket), forced);
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.emplace(key, p).second && p.algorithm != nullptr) {
    if (p.seconds >= 0)
      BRAID_INFO("tuner: %s of <= %zu B on %d ranks: %s (%s), chunk %zu KiB, predicted %.1f us",
                 collectiveName(c), bucketBytes(bucket), config_.nranks, p.algorithm->name, p.reason,
                 p.chunkBytes >> 10, p.seconds * 1e6);
    else
      BRAID_INFO("tuner: %s of <= %zu B on %d ranks: %s (%s), chunk %zu KiB, not modelled",
                 collectiveName(c), bucketBytes(bucket), config_.nranks, p.algorithm->name, p.reason,
                 p.chunkBytes >> 10);
  }
  return p;
}

Pick Tuner::decide(Collective c, size_t bytes, const Algorithm* forced) const {
  Pick p;
  ModelQuery q;
  q.collective = c;
  q.nranks = config_.nranks;
  q.bytes = bytes;
  q.elemSize = bytes % 4 == 0 ? 4 : 1;
  const size_t plainChunk = config_.fixedChunkBytes ? config_.fixedChunkBytes : config_.fallbackChunkBytes;
  if (forced != nullptr) {
    p = {forced, plainChunk, -1, "override"};
    Candidate best;
    if (config_.modelEnabled && predictAlgorithm(*forced, q, config_.params, config_.fixedChunkBytes, &best))
      p.chunkBytes = best.chunkBytes, p.seconds = best.seconds;
    return p;
  }
  if (config_.modelEnabled) {
    std::vector<Candidate> all = predictAll(q, config_.params, config_.fixedChunkBytes);
    if (!all.empty()) return {all[0].algorithm, all[0].chunkBytes, all[0].seconds, "model"};
  }
  return {fallbackAlgorithm(c, bytes, config_.nranks), plainChunk, -1, "fallback"};
}

std::string predictionTable(Collective c, const std::vector<int>& nranks, const std::vector<size_t>& sizes,
                            const CostParams& params) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "# %s: predicted time per algorithm (us), [chunk KiB], * = pick\n",
                collectiveName(c));
  out += line;
  for (int n : nranks) {
    for (size_t bytes : sizes) {
      ModelQuery q;
      q.collective = c;
      q.nranks = n;
      q.bytes = bytes;
      q.elemSize = bytes % 4 == 0 ? 4 : 1;
      std::vector<Candidate> all = predictAll(q, params, 0);
      std::snprintf(line, sizeof line, "%7d ranks %12zu B ", n, bytes);
      out += line;
      for (size_t i = 0; i < all.size(); ++i) {
        std::snprintf(line, sizeof line, " %s%s %.4g [%zu]", i == 0 ? "*" : "", all[i].algorithm->name,
                      all[i].seconds * 1e6, all[i].chunkBytes >> 10);
        out += line;
      }
      out += all.empty() ? "  (no algorithm can be predicted)\n" : "\n";
    }
  }
  return out;
}

}  // namespace braid::algo
