// The embedding tables one rank owns (model parallel: table t lives on rank
// t % nranks). Rows start from a pure function of (seed, table, row), so any
// rank count starts from the same model. They learn with row-wise Adagrad, as
// production DLRMs do: a row seen in few samples of a batch gets a gradient a
// thousand times smaller than the MLP's, and Adagrad's per-row step size
// makes up for that without hand-tuned rates per table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::trainer {

class EmbeddingShard {
 public:
  EmbeddingShard(std::vector<int> tables, int64_t rows, int dim, uint64_t seed);
  const std::vector<int>& tables() const { return tables_; }
  int dim() const { return dim_; }
  int64_t rows() const { return rows_; }
  std::vector<float>& table(size_t local) { return data_[local]; }
  std::vector<float>& adagradState(size_t local) { return state_[local]; }  // one per row

  // out[b][dim] = the sum of the `pooling` rows idx[b][*] of local table `local`.
  void lookup(size_t local, const int32_t* idx, int batch, int pooling, float* out) const;
  // Each of those rows takes grad[b] (a sum's gradient reaches every term):
  // state += mean(grad^2); row -= lr * grad / sqrt(state + eps).
  void adagrad(size_t local, const int32_t* idx, int batch, int pooling, const float* grad, float lr);

 private:
  std::vector<int> tables_;
  int64_t rows_;
  int dim_;
  std::vector<std::vector<float>> data_;   // per local table, rows x dim
  std::vector<std::vector<float>> state_;  // per local table, rows
};

}  // namespace braid::trainer
