#include "dataset.h"

#include "random.h"

namespace braid::trainer {
namespace {

// Streams of the counter-based generator, so that no two uses share values.
enum Stream : uint64_t { kDense = 1, kIndex = 2, kTeacherDense = 3, kTeacherRow = 4 };

}  // namespace

void Dataset::sample(int64_t id, float* dense, int32_t* indices, float* label) const {
  double logit = 0;
  for (int d = 0; d < shape_.dense; ++d) {
    dense[d] = symmetric(1.0f, seed_, kDense, static_cast<uint64_t>(id), d);
    logit += dense[d] * symmetric(1.0f, seed_, kTeacherDense, d);
  }
  for (int t = 0; t < shape_.tables; ++t) {
    for (int k = 0; k < shape_.pooling; ++k) {
      // u^2 puts most lookups on few rows: the hot rows of real traffic.
      double u = unit(seed_, kIndex, static_cast<uint64_t>(id), static_cast<uint64_t>(t) * 64 + k);
      auto row = static_cast<int32_t>(u * u * static_cast<double>(shape_.rows));
      indices[t * shape_.pooling + k] = row;
      logit += symmetric(1.0f, seed_, kTeacherRow, t, static_cast<uint64_t>(row));
    }
  }
  *label = logit > 0 ? 1.0f : 0.0f;
}

}  // namespace braid::trainer
