#include "algorithms/tuner/predict.h"

#include <algorithm>
#include <cstring>

namespace braid::algo {
namespace {

CollectiveArgs argsFor(const ModelQuery& q, int rank, size_t chunk) {
  CollectiveArgs a;
  a.collective = q.collective;
  a.nranks = q.nranks;
  a.rank = rank;
  a.dtype = q.elemSize == 4 ? DataType::kFloat32 : DataType::kUint8;
  a.count = q.bytes / dataTypeSize(a.dtype);
  a.chunkBytes = chunk;
  return a;
}

// All-to-all-v and point-to-point calls carry per-peer counts the tuner does
// not see, so they are never simulated.
bool simulable(Collective c) { return c != Collective::kAllToAllv && c != Collective::kSendRecv; }

// Bytes one rank's buffers span: what its schedule's size grows with.
double spannedBytes(const ModelQuery& q) {
  switch (q.collective) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      return static_cast<double>(q.bytes) * q.nranks;
    default: return static_cast<double>(q.bytes);
  }
}

bool simulate(const Algorithm& a, const ModelQuery& q, const CostParams& p, size_t chunk, double* seconds) {
  if (!simulable(q.collective) || q.nranks > kSimulateMaxRanks) return false;
  // Some schedules grow faster than their chunk count (dependency lists
  // quadratic in it): refuse before building even one.
  if (spannedBytes(q) / static_cast<double>(chunk) > kSimulateMaxChunks) return false;
  Schedule first;  // rank 0 stands for the size of every rank's schedule
  if (!a.build(argsFor(q, 0, chunk), &first).isOk()) return false;
  if (first.steps.size() * static_cast<size_t>(q.nranks) > kSimulateMaxSteps) return false;
  Prediction out;
  Status st = predictTime(
      q.nranks, [&](int r, Schedule* s) { return a.build(argsFor(q, r, chunk), s); }, p, &out);
  if (!st.isOk()) return false;
  *seconds = out.seconds;
  return true;
}

}  // namespace

bool predictAlgorithm(const Algorithm& a, const ModelQuery& query, const CostParams& p, size_t fixedChunk,
                      Candidate* out) {
  ModelQuery q = query;
  double t = 0;
  bool usesChunks = true;
  q.chunkBytes = fixedChunk ? fixedChunk : kSimulateChunk;
  if (!closedFormTime(a.name, q, p, &t, &usesChunks)) {
    if (a.sharedHostsOnly) return false;  // the simulation below would put every rank on a host of its own
    // Simulated at one chunk size only: the call path pays for every run.
    if (!simulate(a, q, p, q.chunkBytes, &t)) return false;
    *out = {&a, q.chunkBytes, t, false};
    return true;
  }
  std::vector<size_t> chunks;
  if (fixedChunk || !usesChunks) chunks.push_back(q.chunkBytes);
  else chunks.assign(std::begin(kChunkChoices), std::end(kChunkChoices));
  Candidate best;
  for (size_t chunk : chunks) {
    q.chunkBytes = chunk;
    closedFormTime(a.name, q, p, &t, &usesChunks);
    // Strictly better only: the smaller chunk wins ties (less scratch, more overlap).
    if (best.algorithm == nullptr || t < best.seconds) best = {&a, chunk, t, true};
  }
  *out = best;
  return true;
}

std::vector<Candidate> predictAll(const ModelQuery& q, const CostParams& p, size_t fixedChunk) {
  std::vector<Candidate> all;
  for (const Algorithm& a : registeredAlgorithms()) {
    if (a.collective != q.collective || (a.sharedHostsOnly && p.ranksPerHost < 2)) continue;
    if (a.largestBytes != 0 && q.bytes > a.largestBytes) continue;
    const Algorithm* stable = findAlgorithm(a.collective, a.name);  // registry storage outlives us
    Candidate c;
    if (stable && predictAlgorithm(*stable, q, p, fixedChunk, &c)) all.push_back(c);
  }
  std::sort(all.begin(), all.end(), [](const Candidate& x, const Candidate& y) {
    if (x.seconds != y.seconds) return x.seconds < y.seconds;
    return std::strcmp(x.algorithm->name, y.algorithm->name) < 0;
  });
  return all;
}

}  // namespace braid::algo
