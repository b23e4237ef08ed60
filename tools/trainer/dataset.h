// A synthetic click log in DLRM's shape: dense features, one multi-hot
// categorical feature per embedding table (`pooling` rows each, skewed towards
// hot rows as real traffic is), and a label that a hidden "teacher" decides
// from both, so the model has something real to learn. Sample i is a pure
// function of (seed, i): every rank generates any part of any batch alone.
#pragma once

#include <cstdint>

namespace braid::trainer {

struct DatasetShape {
  int dense = 13;
  int tables = 8;
  int64_t rows = 10000;
  int pooling = 2;
};

class Dataset {
 public:
  Dataset(const DatasetShape& shape, uint64_t seed) : shape_(shape), seed_(seed) {}
  const DatasetShape& shape() const { return shape_; }
  // dense[shape.dense], indices[shape.tables][shape.pooling], *label 0 or 1.
  void sample(int64_t id, float* dense, int32_t* indices, float* label) const;

 private:
  DatasetShape shape_;
  uint64_t seed_;
};

}  // namespace braid::trainer
