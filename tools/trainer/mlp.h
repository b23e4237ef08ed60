// The dense part of the model, replicated on every rank (data parallel): one
// hidden layer with ReLU and a logit, trained with binary cross-entropy. Its
// parameters and gradients are each one flat array, so that one all-reduce
// averages every gradient.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::trainer {

class Mlp {
 public:
  Mlp(int inputs, int hidden, uint64_t seed);
  size_t size() const { return params_.size(); }
  float* params() { return params_.data(); }
  float* grads() { return grads_.data(); }

  struct BatchResult {
    double lossSum = 0;  // summed over the batch
    int correct = 0;
  };
  // Forward and backward over x[batch][inputs] with labels y. The gradients
  // (overwritten) are of the loss summed over the batch times `scale` (1 /
  // the global batch: then the all-reduced sum is the global mean's); dx gets
  // the same for the inputs.
  BatchResult forwardBackward(const float* x, const float* y, int batch, float scale, float* dx);
  void sgd(float lr);

 private:
  int inputs_, hidden_;
  std::vector<float> params_, grads_;  // W1[hidden][inputs], b1[hidden], w2[hidden], b2
  std::vector<float> h_;               // one sample's hidden activations
};

}  // namespace braid::trainer
