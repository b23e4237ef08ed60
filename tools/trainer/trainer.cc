#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "checkpoint.h"

namespace braid::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string braidFailed(const char* call, braidResult_t rc, braidComm_t comm) {
  return std::string(call) + " failed [" + braidGetErrorString(rc) + "]: " + braidGetLastError(comm);
}

}  // namespace

Trainer::Trainer(const TrainerOptions& o, braidComm_t comm, int rank, int nranks)
    : o_(o),
      comm_(comm),
      rank_(rank),
      nranks_(nranks),
      data_(o.data, o.seed),
      owners_(nranks, o.data.tables),
      exchange_(comm, rank, owners_, o.batch, o.data.pooling, o.dim,
                WireCodecs{o.forwardCodec, o.backwardCodec, o.lossScale}),
      mlp_(o.data.dense + o.data.tables * o.dim, o.hidden, o.seed),
      shard_(owners_.tablesOf[rank], o.data.rows, o.dim, o.seed),
      inputs_(o.data.dense + o.data.tables * o.dim),
      idxByOwner_(ExchangeAllocator<int32_t>(o.shareableMemory)),
      idxBySample_(ExchangeAllocator<int32_t>(o.shareableMemory)),
      embBySample_(ExchangeAllocator<float>(o.shareableMemory)),
      embByOwner_(ExchangeAllocator<float>(o.shareableMemory)),
      gradByOwner_(ExchangeAllocator<float>(o.shareableMemory)),
      gradBySample_(ExchangeAllocator<float>(o.shareableMemory)) {
  const int B = o.batch, T = o.data.tables, P = o.data.pooling, E = o.dim;
  dense_.resize(static_cast<size_t>(B) * o.data.dense);
  labels_.resize(B);
  idx_.resize(static_cast<size_t>(B) * T * P);
  idxByOwner_.resize(exchange_.byOwnerCount(P));
  idxBySample_.resize(exchange_.bySampleCount(P));
  embBySample_.resize(exchange_.bySampleCount(E));
  embByOwner_.resize(exchange_.byOwnerCount(E));
  gradByOwner_.resize(exchange_.byOwnerCount(E));
  gradBySample_.resize(exchange_.bySampleCount(E));
  x_.resize(static_cast<size_t>(B) * inputs_);
  dx_.resize(x_.size());
}

Trainer::~Trainer() {
  if (stream_) braidStreamDestroy(stream_);  // waits for the queued steps, which use the gradients
  if (gradsHandle_) braidCommDeregister(comm_, gradsHandle_);
}

std::string Trainer::step(int64_t s, Timings* t, double* lossSum, double* correct) {
  const int B = o_.batch, T = o_.data.tables, P = o_.data.pooling, E = o_.dim, D = o_.data.dense;
  const int myT = static_cast<int>(shard_.tables().size());
  auto t0 = Clock::now();
  // This rank's samples of the global batch, their indices grouped by owner.
  const int64_t first = s * static_cast<int64_t>(nranks_) * B + static_cast<int64_t>(rank_) * B;
  for (int b = 0; b < B; ++b)
    data_.sample(first + b, &dense_[static_cast<size_t>(b) * D], &idx_[static_cast<size_t>(b) * T * P],
                 &labels_[b]);
  for (int tab = 0; tab < T; ++tab) {
    int32_t* out = &idxByOwner_[exchange_.byOwnerOffset(tab, P)];
    for (int b = 0; b < B; ++b)
      for (int k = 0; k < P; ++k) out[b * P + k] = idx_[(static_cast<size_t>(b) * T + tab) * P + k];
  }
  t->compute += msSince(t0);

  t0 = Clock::now();
  if (std::string e = exchange_.indices(idxByOwner_.data(), idxBySample_.data()); !e.empty()) return e;
  t->indices += msSince(t0);

  // What arrives is looked up in this rank's tables: a row out of range is a
  // peer's bug, refused before it reads or writes outside a table.
  t0 = Clock::now();
  for (int32_t row : idxBySample_)
    if (row < 0 || row >= shard_.rows())
      return "a peer sent embedding row " + std::to_string(row) + ", out of range";
  for (int p = 0; p < nranks_; ++p)
    for (int j = 0; j < myT; ++j) {
      size_t block = static_cast<size_t>(p) * myT + j;
      shard_.lookup(j, &idxBySample_[block * B * P], B, P, &embBySample_[block * B * E]);
    }
  t->compute += msSince(t0);

  t0 = Clock::now();
  if (std::string e = exchange_.forward(embBySample_.data(), embByOwner_.data()); !e.empty()) return e;
  t->forward += msSince(t0);

  t0 = Clock::now();
  for (int b = 0; b < B; ++b) {
    float* xb = &x_[static_cast<size_t>(b) * inputs_];
    std::copy_n(&dense_[static_cast<size_t>(b) * D], D, xb);
    for (int tab = 0; tab < T; ++tab)
      std::copy_n(&embByOwner_[exchange_.byOwnerOffset(tab, E) + static_cast<size_t>(b) * E], E,
                  xb + D + tab * E);
  }
  float scale = 1.0f / static_cast<float>(static_cast<int64_t>(nranks_) * B);
  Mlp::BatchResult r = mlp_.forwardBackward(x_.data(), labels_.data(), B, scale, dx_.data());
  *lossSum += r.lossSum;
  *correct += r.correct;
  for (int tab = 0; tab < T; ++tab) {
    float* out = &gradByOwner_[exchange_.byOwnerOffset(tab, E)];
    for (int b = 0; b < B; ++b)
      std::copy_n(&dx_[static_cast<size_t>(b) * inputs_ + D + tab * E], E, out + b * E);
  }
  t->compute += msSince(t0);

  t0 = Clock::now();
  if (std::string e = exchange_.backward(gradByOwner_.data(), gradBySample_.data()); !e.empty()) return e;
  t->backward += msSince(t0);

  // The MLP's gradients travel while the tables update (MegaScale's overlap
  // of communication with computation); only the wait left after is exposed.
  t0 = Clock::now();
  if (std::string e = exchange_.sumGradients(mlp_.grads(), mlp_.size(), stream_); !e.empty()) return e;
  t->gradients += msSince(t0);
  t0 = Clock::now();
  for (int p = 0; p < nranks_; ++p)
    for (int j = 0; j < myT; ++j) {
      size_t block = static_cast<size_t>(p) * myT + j;
      shard_.adagrad(j, &idxBySample_[block * B * P], B, P, &gradBySample_[block * B * E], o_.embeddingLr);
    }
  t->compute += msSince(t0);
  if (stream_) {
    t0 = Clock::now();
    if (braidResult_t rc = braidStreamSynchronize(stream_); rc != braidSuccess)
      return braidFailed("braidStreamSynchronize (MLP gradients)", rc, comm_);
    t->gradients += msSince(t0);
  }
  mlp_.sgd(o_.lr);
  return "";
}

std::string Trainer::report(int64_t s, int64_t steps, const Timings& t, double lossSum, double correct,
                            bool last) {
  double mine[2] = {lossSum, correct}, all[2] = {0, 0};
  if (braidResult_t rc = braidAllReduce(mine, all, 2, braidFloat64, braidSum, comm_, nullptr);
      rc != braidSuccess)
    return braidFailed("braidAllReduce (loss)", rc, comm_);
  if (rank_ != 0) return "";
  double samples = static_cast<double>(steps) * nranks_ * o_.batch;
  double total = t.compute + t.indices + t.forward + t.backward + t.gradients;
  std::printf("%8lld %10.6f %8.4f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", static_cast<long long>(s),
              all[0] / samples, all[1] / samples, total / steps, t.compute / steps, t.indices / steps,
              t.forward / steps, t.backward / steps, t.gradients / steps);
  if (last)
    std::printf("final step %lld loss %.9g accuracy %.6f\n", static_cast<long long>(s), all[0] / samples,
                all[1] / samples);
  std::fflush(stdout);
  return "";
}

std::string Trainer::save(int64_t stepsDone) {
  std::string dir = stepDir(o_.checkpointDir, stepsDone);
  if (rank_ == 0) {
    std::vector<float> params(mlp_.params(), mlp_.params() + mlp_.size());
    if (std::string e = writeBlob(dir + "/mlp.bin", 0, stepsDone, params); !e.empty()) return e;
  }
  for (size_t j = 0; j < shard_.tables().size(); ++j) {
    int t = shard_.tables()[j];
    std::string name = dir + "/table" + std::to_string(t);
    if (std::string e = writeBlob(name + ".bin", 1 + t, stepsDone, shard_.table(j)); !e.empty()) return e;
    if (std::string e = writeBlob(name + ".adagrad.bin", 1 + t, stepsDone, shard_.adagradState(j));
        !e.empty())
      return e;
  }
  // Every rank's files are written before rank 0 names the step complete.
  if (braidResult_t rc = braidBarrier(comm_, nullptr); rc != braidSuccess)
    return braidFailed("braidBarrier (checkpoint)", rc, comm_);
  return rank_ == 0 ? commitStep(o_.checkpointDir, stepsDone) : "";
}

std::string Trainer::load(int64_t* stepsDone) {
  int64_t step = latestStep(o_.checkpointDir);
  if (step < 0) return "--resume: no checkpoint in " + o_.checkpointDir + " (no readable 'latest')";
  std::string dir = stepDir(o_.checkpointDir, step);
  std::vector<float> params(mlp_.size());
  if (std::string e = readBlob(dir + "/mlp.bin", 0, step, &params); !e.empty()) return e;
  std::copy(params.begin(), params.end(), mlp_.params());
  for (size_t j = 0; j < shard_.tables().size(); ++j) {
    int t = shard_.tables()[j];
    std::string name = dir + "/table" + std::to_string(t);
    if (std::string e = readBlob(name + ".bin", 1 + t, step, &shard_.table(j)); !e.empty()) return e;
    if (std::string e = readBlob(name + ".adagrad.bin", 1 + t, step, &shard_.adagradState(j)); !e.empty())
      return e;
  }
  *stepsDone = step;
  return "";
}

std::string Trainer::run() {
  if (o_.overlap)
    if (braidResult_t rc = braidStreamCreate(&stream_); rc != braidSuccess)
      return braidFailed("braidStreamCreate", rc, nullptr);
  // The gradients are all-reduced every step from one buffer, so it is
  // registered once, as data-parallel frameworks register their buckets: over
  // RDMA its messages then pin nothing (elsewhere this records the range).
  if (braidResult_t rc = braidCommRegister(comm_, mlp_.grads(), mlp_.size() * sizeof(float), &gradsHandle_);
      rc != braidSuccess)
    return braidFailed("braidCommRegister (MLP gradients)", rc, comm_);
  int64_t start = 0;
  if (o_.resume) {
    if (std::string e = load(&start); !e.empty()) return e;
    if (start >= o_.steps)
      return "--resume: the checkpoint is at step " + std::to_string(start) + ", so --steps " +
             std::to_string(o_.steps) + " leaves nothing to train";
  }
  if (rank_ == 0) {
    std::printf(
        "# braid-trainer: %d ranks x batch %d, %d tables x %lld rows x %d (pooling %d), %d dense, MLP "
        "%d-%d-1, "
        "lr %g / %g, wire fwd %s bwd %s, overlap %d, from step %lld\n",
        nranks_, o_.batch, o_.data.tables, static_cast<long long>(o_.data.rows), o_.dim, o_.data.pooling,
        o_.data.dense, inputs_, o_.hidden, o_.lr, o_.embeddingLr, codecName(o_.forwardCodec),
        codecName(o_.backwardCodec), o_.overlap ? 1 : 0, static_cast<long long>(start));
    std::printf("# %6s %10s %8s %9s %9s %9s %9s %9s %9s\n", "step", "loss", "accuracy", "ms/step", "compute",
                "indices", "fwd_a2a", "bwd_a2a", "allreduce");
  }
  Timings t;
  double lossSum = 0, correct = 0;
  int64_t inWindow = 0;
  for (int64_t s = start; s < o_.steps; ++s) {
    if (std::string e = step(s, &t, &lossSum, &correct); !e.empty())
      return "step " + std::to_string(s) + ": " + e;
    ++inWindow;
    bool last = s + 1 == o_.steps;
    if ((s + 1) % o_.reportEvery == 0 || last) {
      if (std::string e = report(s + 1, inWindow, t, lossSum, correct, last); !e.empty()) return e;
      t = Timings{};
      lossSum = correct = 0;
      inWindow = 0;
    }
    bool checkpoint =
        !o_.checkpointDir.empty() && ((o_.checkpointEvery > 0 && (s + 1) % o_.checkpointEvery == 0) || last);
    if (checkpoint)
      if (std::string e = save(s + 1); !e.empty())
        return "checkpoint at step " + std::to_string(s + 1) + ": " + e;
  }
  return "";
}

}  // namespace braid::trainer
