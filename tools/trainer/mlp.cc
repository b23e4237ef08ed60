#include "mlp.h"

#include <algorithm>
#include <cmath>

#include "random.h"

namespace braid::trainer {

Mlp::Mlp(int inputs, int hidden, uint64_t seed)
    : inputs_(inputs),
      hidden_(hidden),
      params_(static_cast<size_t>(hidden) * inputs + 2 * hidden + 1),
      grads_(params_.size()),
      h_(hidden) {
  // He-style scale; the same values on every rank, from the seed alone.
  float r1 = std::sqrt(6.0f / static_cast<float>(inputs)), r2 = std::sqrt(6.0f / static_cast<float>(hidden));
  size_t w1 = static_cast<size_t>(hidden) * inputs;
  for (size_t i = 0; i < w1; ++i) params_[i] = symmetric(r1, seed, 101, i);
  for (int j = 0; j < hidden; ++j) params_[w1 + hidden + j] = symmetric(r2, seed, 102, j);
}

Mlp::BatchResult Mlp::forwardBackward(const float* x, const float* y, int batch, float scale, float* dx) {
  std::fill(grads_.begin(), grads_.end(), 0.0f);
  const size_t w1 = static_cast<size_t>(hidden_) * inputs_;
  const float* W1 = params_.data();
  const float* b1 = W1 + w1;
  const float* w2 = b1 + hidden_;
  const float b2 = w2[hidden_];
  float* gW1 = grads_.data();
  float* gb1 = gW1 + w1;
  float* gw2 = gb1 + hidden_;
  float& gb2 = gw2[hidden_];
  BatchResult result;
  for (int b = 0; b < batch; ++b) {
    const float* xb = x + static_cast<size_t>(b) * inputs_;
    float z = b2;
    for (int j = 0; j < hidden_; ++j) {
      float a = b1[j];
      const float* row = W1 + static_cast<size_t>(j) * inputs_;
      for (int i = 0; i < inputs_; ++i) a += row[i] * xb[i];
      h_[j] = a > 0 ? a : 0;
      z += w2[j] * h_[j];
    }
    // Binary cross-entropy on the logit, in its stable form.
    result.lossSum += std::max(z, 0.0f) - z * y[b] + std::log1p(std::exp(-std::fabs(z)));
    result.correct += (z > 0) == (y[b] > 0.5f);
    float p = 1.0f / (1.0f + std::exp(-z));
    float dz = (p - y[b]) * scale;
    gb2 += dz;
    float* dxb = dx + static_cast<size_t>(b) * inputs_;
    std::fill(dxb, dxb + inputs_, 0.0f);
    for (int j = 0; j < hidden_; ++j) {
      gw2[j] += dz * h_[j];
      if (h_[j] <= 0) continue;
      float da = dz * w2[j];
      gb1[j] += da;
      const float* row = W1 + static_cast<size_t>(j) * inputs_;
      float* grow = gW1 + static_cast<size_t>(j) * inputs_;
      for (int i = 0; i < inputs_; ++i) {
        grow[i] += da * xb[i];
        dxb[i] += da * row[i];
      }
    }
  }
  return result;
}

void Mlp::sgd(float lr) {
  for (size_t i = 0; i < params_.size(); ++i) params_[i] -= lr * grads_[i];
}

}  // namespace braid::trainer
