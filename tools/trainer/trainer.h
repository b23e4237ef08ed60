// One rank's training loop: the step (batch, lookups, exchanges, MLP,
// updates), the reports and the checkpoints. Errors come back as text; the
// caller aborts the communicator, so that no other rank waits on this one.
#pragma once

#include <braid/braid.h>

#include <memory>
#include <string>
#include <vector>

#include "dataset.h"
#include "embedding_shard.h"
#include "exchange.h"
#include "exchange_memory.h"
#include "mlp.h"
#include "options.h"

namespace braid::trainer {

class Trainer {
 public:
  Trainer(const TrainerOptions& options, braidComm_t comm, int rank, int nranks);
  ~Trainer();
  // "" when every step ran.
  std::string run();

 private:
  struct Timings {
    double compute = 0, indices = 0, forward = 0, backward = 0, gradients = 0;
  };
  std::string step(int64_t s, Timings* t, double* lossSum, double* correct);
  std::string report(int64_t s, int64_t steps, const Timings& t, double lossSum, double correct, bool last);
  std::string save(int64_t stepsDone);
  std::string load(int64_t* stepsDone);

  TrainerOptions o_;
  braidComm_t comm_;
  int rank_, nranks_;
  Dataset data_;
  Ownership owners_;
  Exchange exchange_;
  Mlp mlp_;
  EmbeddingShard shard_;
  braidStream_t stream_ = nullptr;
  void* gradsHandle_ = nullptr;  // braidCommRegister's, for mlp_.grads()
  int inputs_;
  // Per-step buffers (see exchange.h for the layouts).
  std::vector<float> dense_, labels_, x_, dx_;
  std::vector<int32_t> idx_;
  // What the exchanges move (exchange_memory.h).
  ExchangeBuffer<int32_t> idxByOwner_, idxBySample_;
  ExchangeBuffer<float> embBySample_, embByOwner_, gradByOwner_, gradBySample_;
};

}  // namespace braid::trainer
