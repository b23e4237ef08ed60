#include "collectives.h"

namespace braid::perf {

namespace {

// ---- Bus bandwidth factors (nccl-tests' PERFORMANCE.md) -----------------
double factorAllReduce(int n) { return 2.0 * (n - 1) / n; }
double factorSpread(int n) { return static_cast<double>(n - 1) / n; }
double factorOne(int) { return 1.0; }

// ---- Layouts --------------------------------------------------------------
// Whole-buffer collectives: count = size / typeSize, on both sides.
Layout layoutWhole(size_t bytes, size_t ts, int, int, int) {
  Layout l;
  l.count = l.sendCount = l.recvCount = bytes / ts;
  l.bytes = l.count * ts;
  return l;
}
// all-gather: each rank contributes count = size / typeSize / nranks.
Layout layoutAllGather(size_t bytes, size_t ts, int n, int rank, int) {
  Layout l;
  l.count = bytes / ts / n;
  l.sendCount = l.count;
  l.recvCount = l.count * n;
  l.bytes = l.recvCount * ts;
  l.inPlaceSendOffset = rank * l.count;
  return l;
}
// reduce-scatter: each rank receives count = size / typeSize / nranks.
Layout layoutReduceScatter(size_t bytes, size_t ts, int n, int rank, int) {
  Layout l;
  l.count = bytes / ts / n;
  l.sendCount = l.count * n;
  l.recvCount = l.count;
  l.bytes = l.sendCount * ts;
  l.inPlaceRecvOffset = rank * l.count;
  return l;
}
// all-to-all: count = size / typeSize / nranks to and from each peer.
Layout layoutAllToAll(size_t bytes, size_t ts, int n, int, int) {
  Layout l;
  l.count = bytes / ts / n;
  l.sendCount = l.recvCount = l.count * n;
  l.bytes = l.sendCount * ts;
  return l;
}

// gather: as all-gather's buffers, but gathered on the root alone, where in
// place puts the send block at the root's place (recvbuff + root * count).
Layout layoutGather(size_t bytes, size_t ts, int n, int, int root) {
  return layoutAllGather(bytes, ts, n, root, root);
}
// scatter: as reduce-scatter's buffers, the root's send blocks scattered; in
// place the root's own block is received where it lies (sendbuff + root * count).
Layout layoutScatter(size_t bytes, size_t ts, int n, int, int root) {
  return layoutReduceScatter(bytes, ts, n, root, root);
}

// ---- Inputs -----------------------------------------------------------------
std::optional<uint64_t> sendPlain(const Layout&, int, int, size_t j) { return j; }
std::optional<uint64_t> sendAllGather(const Layout& l, int rank, int, size_t j) { return rank * l.count + j; }
std::optional<uint64_t> sendRootOnly(const Layout&, int rank, int root, size_t j) {
  if (rank != root) return std::nullopt;
  return j;
}

// ---- Expected outputs -------------------------------------------------------
std::optional<int64_t> expectAllReduce(const ValuePlan& p, const Layout&, int, int, size_t k) {
  return reducedValue(p, k);
}
std::optional<int64_t> expectReduce(const ValuePlan& p, const Layout&, int rank, int root, size_t k) {
  if (rank != root) return std::nullopt;
  return reducedValue(p, k);
}
std::optional<int64_t> expectReduceScatter(const ValuePlan& p, const Layout& l, int rank, int, size_t k) {
  return reducedValue(p, rank * l.count + k);
}
std::optional<int64_t> expectAllGather(const ValuePlan& p, const Layout& l, int, int, size_t k) {
  return inputValue(p, static_cast<int>(k / l.count), k);
}
std::optional<int64_t> expectBroadcast(const ValuePlan& p, const Layout&, int, int root, size_t k) {
  return inputValue(p, root, k);
}
std::optional<int64_t> expectAllToAll(const ValuePlan& p, const Layout& l, int rank, int, size_t k) {
  const size_t from = k / l.count;
  return inputValue(p, static_cast<int>(from), rank * l.count + k % l.count);
}
std::optional<int64_t> expectGather(const ValuePlan& p, const Layout& l, int rank, int root, size_t k) {
  if (rank != root) return std::nullopt;
  return inputValue(p, static_cast<int>(k / l.count), k);
}
std::optional<int64_t> expectScatter(const ValuePlan& p, const Layout& l, int rank, int root, size_t k) {
  return inputValue(p, root, rank * l.count + k);
}
std::optional<int64_t> expectSendRecv(const ValuePlan& p, const Layout&, int rank, int, size_t k) {
  return inputValue(p, (rank + p.nranks - 1) % p.nranks, k);
}

}  // namespace

const std::vector<Collective>& collectives() {
  // No in-place form: all-to-all (braid rejects send == recv, as for
  // all-to-all-v) and sendrecv (sending from and receiving into one buffer at
  // once has no defined result).
  using K = CollectiveKind;
  static const std::vector<Collective> table = {
      {K::kAllReduce, "allreduce", true, false, true, factorAllReduce, layoutWhole, sendPlain,
       expectAllReduce},
      {K::kAllGather, "allgather", false, false, true, factorSpread, layoutAllGather, sendAllGather,
       expectAllGather},
      {K::kReduceScatter, "reducescatter", true, false, true, factorSpread, layoutReduceScatter, sendPlain,
       expectReduceScatter},
      {K::kBroadcast, "broadcast", false, true, true, factorOne, layoutWhole, sendRootOnly, expectBroadcast},
      {K::kReduce, "reduce", true, true, true, factorOne, layoutWhole, sendPlain, expectReduce},
      {K::kAllToAll, "alltoall", false, false, false, factorSpread, layoutAllToAll, sendPlain,
       expectAllToAll},
      {K::kSendRecv, "sendrecv", false, false, false, factorOne, layoutWhole, sendPlain, expectSendRecv},
      {K::kGather, "gather", false, true, true, factorSpread, layoutGather, sendAllGather, expectGather},
      {K::kScatter, "scatter", false, true, true, factorSpread, layoutScatter, sendRootOnly, expectScatter},
  };
  return table;
}

const Collective* findCollective(const std::string& name) {
  for (const Collective& c : collectives()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace braid::perf
