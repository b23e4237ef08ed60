#include "exchange.h"

namespace braid::trainer {

Ownership::Ownership(int n, int tables) : nranks(n), tablesOf(n) {
  for (int t = 0; t < tables; ++t) tablesOf[t % n].push_back(t);
}

Exchange::Exchange(braidComm_t comm, int rank, const Ownership& owners, int batch, int pooling, int dim,
                   WireCodecs codecs)
    : comm_(comm),
      nranks_(owners.nranks),
      tables_(0),
      batch_(batch),
      pooling_(pooling),
      dim_(dim),
      myTables_(static_cast<int>(owners.tablesOf[rank].size())),
      owners_(owners),
      codecs_(codecs) {
  // By owner, then by the owner's tables in order: table t's block index.
  for (const auto& t : owners.tablesOf) tables_ += static_cast<int>(t.size());
  blockOf_.resize(tables_);
  size_t block = 0;
  for (const auto& t : owners.tablesOf)
    for (int table : t) blockOf_[table] = block++;
  indexCounts_ = countsFor(pooling_, true);
  forwardCounts_ = countsFor(dim_, false);
  backwardCounts_ = countsFor(dim_, true);
}

// toOwners: this rank sends its samples' blocks by owner and receives every
// rank's blocks of its own tables; the reverse otherwise.
Exchange::Counts Exchange::countsFor(int width, bool toOwners) const {
  Counts c;
  size_t byOwnerAt = 0, bySampleAt = 0;
  std::vector<size_t> byOwner, byOwnerDispl, bySample, bySampleDispl;
  for (int q = 0; q < nranks_; ++q) {
    size_t n = owners_.tablesOf[q].size() * static_cast<size_t>(batch_) * width;
    byOwner.push_back(n);
    byOwnerDispl.push_back(byOwnerAt);
    byOwnerAt += n;
    size_t m = static_cast<size_t>(myTables_) * batch_ * width;
    bySample.push_back(m);
    bySampleDispl.push_back(bySampleAt);
    bySampleAt += m;
  }
  if (toOwners) {
    c.send = byOwner, c.sendDispl = byOwnerDispl, c.recv = bySample, c.recvDispl = bySampleDispl;
  } else {
    c.send = bySample, c.sendDispl = bySampleDispl, c.recv = byOwner, c.recvDispl = byOwnerDispl;
  }
  return c;
}

size_t Exchange::byOwnerOffset(int table, int width) const {
  return blockOf_[table] * static_cast<size_t>(batch_) * width;
}

std::string Exchange::failed(const char* call, braidResult_t rc) const {
  return std::string(call) + " failed [" + braidGetErrorString(rc) + "]: " + braidGetLastError(comm_);
}

std::string Exchange::indices(const int32_t* byOwner, int32_t* bySample) {
  const Counts& c = indexCounts_;
  braidResult_t rc = braidAllToAllv(byOwner, c.send.data(), c.sendDispl.data(), bySample, c.recv.data(),
                                    c.recvDispl.data(), braidInt32, comm_, nullptr);
  return rc == braidSuccess ? "" : failed("braidAllToAllv (indices)", rc);
}

std::string Exchange::forward(const float* bySample, float* byOwner) {
  const Counts& c = forwardCounts_;
  braidResult_t rc =
      codecs_.forward == braidCodecNone
          ? braidAllToAllv(bySample, c.send.data(), c.sendDispl.data(), byOwner, c.recv.data(),
                           c.recvDispl.data(), braidFloat32, comm_, nullptr)
          : braidAllToAllvQuantized(bySample, c.send.data(), c.sendDispl.data(), byOwner, c.recv.data(),
                                    c.recvDispl.data(), braidFloat32, codecs_.forward, comm_, nullptr);
  return rc == braidSuccess ? "" : failed("all-to-all (embeddings forward)", rc);
}

std::string Exchange::backward(const float* byOwner, float* bySample) {
  const Counts& c = backwardCounts_;
  braidQuantConfig_t q = BRAID_QUANT_CONFIG_INITIALIZER;
  if (codecs_.backward == braidCodecFloat16) q.lossScale = codecs_.backwardLossScale;
  braidResult_t rc = codecs_.backward == braidCodecNone
                         ? braidAllToAllv(byOwner, c.send.data(), c.sendDispl.data(), bySample, c.recv.data(),
                                          c.recvDispl.data(), braidFloat32, comm_, nullptr)
                         : braidAllToAllvQuantizedConfig(byOwner, c.send.data(), c.sendDispl.data(), bySample,
                                                         c.recv.data(), c.recvDispl.data(), braidFloat32,
                                                         codecs_.backward, &q, comm_, nullptr);
  return rc == braidSuccess ? "" : failed("all-to-all (embedding gradients)", rc);
}

std::string Exchange::sumGradients(float* grads, size_t count, braidStream_t stream) {
  braidResult_t rc = braidAllReduce(grads, grads, count, braidFloat32, braidSum, comm_, stream);
  return rc == braidSuccess ? "" : failed("braidAllReduce (MLP gradients)", rc);
}

}  // namespace braid::trainer
