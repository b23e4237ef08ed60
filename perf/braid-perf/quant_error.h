// braid-perf -q: the pure half of measuring quantized collectives. Inputs are
// random values spread over a few binades (so fp8 blocks get different
// scales and relative errors stay meaningful); each received value is
// compared with the unquantized value its owner sent, giving the max and RMS
// relative error, and every element is checked against the absolute bound the
// codec promises (braid.h), a violation being a failure like nccl-tests'
// #wrong.
#pragma once

#include <braid/braid.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid::perf {

// "fp16", "bf16", "e4m3", "e5m2" (and "none"); std::nullopt otherwise.
std::optional<braidCodec_t> parseCodec(const std::string& name);
const char* codecName(braidCodec_t codec);

struct QuantSettings {
  braidCodec_t codec = braidCodecNone;
  unsigned blockSize = 256;  // fp8
  float lossScale = 1.0f;    // fp16
};

// The relative error the codec promises for values in its normal range (half
// an ulp of the wire format): 2^-11, 2^-8, 2^-4, 2^-3; 0 for none. With
// bfloat16 host values the decoded value is rounded to bf16 once more.
double promisedRelativeError(braidCodec_t codec, braidDataType_t hostType);

// Input value number `index` of rank `owner`: +-(1 + u) * 2^e, e in [-4, 4],
// exactly representable in hostType (float32 or bfloat16).
float quantInput(int owner, uint64_t index, braidDataType_t hostType);
void storeHost(void* buf, size_t i, braidDataType_t hostType, float v);
float loadHost(const void* buf, size_t i, braidDataType_t hostType);

// Error statistics of received values; merge across ranks with sums and max.
struct QuantError {
  double maxRel = 0;
  double sumSqRel = 0;
  double count = 0;
  int64_t violations = 0;  // elements outside the codec's absolute bound
  double rms() const { return count > 0 ? std::sqrt(sumSqRel / count) : 0; }
};

// Adds one fp8 block, or any run of values for the other codecs: sent are the
// values as their owner sent them, got as received. amax for the fp8 bound is
// taken over `sent` (pass exactly one scaled block for fp8).
void accumulateError(const QuantSettings& q, braidDataType_t hostType, const std::vector<float>& sent,
                     const std::vector<float>& got, QuantError* err);

// Table header for -q runs (replaces #wrong by the two error columns) and the
// cells of one out-of-place or in-place group.
std::string quantTableHeader(const QuantSettings& q, braidDataType_t hostType);
std::string quantCells(bool skipped, double timeUs, double algBw, double busBw, const QuantError& err);

}  // namespace braid::perf
