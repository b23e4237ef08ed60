#include "embedding_shard.h"

#include <algorithm>
#include <cmath>

#include "random.h"

namespace braid::trainer {

EmbeddingShard::EmbeddingShard(std::vector<int> tables, int64_t rows, int dim, uint64_t seed)
    : tables_(std::move(tables)), rows_(rows), dim_(dim) {
  for (int t : tables_) {
    std::vector<float> rowsData(static_cast<size_t>(rows) * dim);
    for (int64_t r = 0; r < rows; ++r)
      for (int k = 0; k < dim; ++k)
        rowsData[static_cast<size_t>(r) * dim + k] =
            symmetric(0.05f, seed, 200 + t, static_cast<uint64_t>(r), k);
    data_.push_back(std::move(rowsData));
    state_.emplace_back(static_cast<size_t>(rows), 0.0f);
  }
}

void EmbeddingShard::lookup(size_t local, const int32_t* idx, int batch, int pooling, float* out) const {
  const std::vector<float>& t = data_[local];
  for (int b = 0; b < batch; ++b) {
    float* o = out + static_cast<size_t>(b) * dim_;
    std::fill(o, o + dim_, 0.0f);
    for (int k = 0; k < pooling; ++k) {
      const float* row = t.data() + static_cast<size_t>(idx[b * pooling + k]) * dim_;
      for (int d = 0; d < dim_; ++d) o[d] += row[d];
    }
  }
}

void EmbeddingShard::adagrad(size_t local, const int32_t* idx, int batch, int pooling, const float* grad,
                             float lr) {
  constexpr float kEps = 1e-8f;
  std::vector<float>& t = data_[local];
  std::vector<float>& state = state_[local];
  for (int b = 0; b < batch; ++b) {
    const float* g = grad + static_cast<size_t>(b) * dim_;
    float squares = 0;
    for (int d = 0; d < dim_; ++d) squares += g[d] * g[d];
    for (int k = 0; k < pooling; ++k) {
      int32_t r = idx[b * pooling + k];
      state[r] += squares / static_cast<float>(dim_);
      float step = lr / std::sqrt(state[r] + kEps);
      float* row = t.data() + static_cast<size_t>(r) * dim_;
      for (int d = 0; d < dim_; ++d) row[d] -= step * g[d];
    }
  }
}

}  // namespace braid::trainer
