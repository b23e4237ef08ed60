// braid-trainer's command line.
#pragma once

#include <braid/braid.h>

#include <cstdint>
#include <string>

#include "dataset.h"

namespace braid::trainer {

struct TrainerOptions {
  DatasetShape data;
  int dim = 16;     // embedding width
  int hidden = 64;  // MLP hidden units
  int batch = 256;  // samples per rank per step
  int64_t steps = 1000;
  float lr = 0.5f;            // the MLP's SGD
  float embeddingLr = 0.05f;  // the tables' row-wise Adagrad
  uint64_t seed = 1;
  braidCodec_t forwardCodec = braidCodecNone;
  braidCodec_t backwardCodec = braidCodecNone;
  float lossScale = 1024.0f;  // fp16 gradients on the wire
  int reportEvery = 100;
  bool overlap = true;        // MLP gradients summed on a braid stream while tables update
  std::string checkpointDir;  // "" : none
  int64_t checkpointEvery = 0;
  bool resume = false;
  // The exchange buffers from braidMemAlloc (peers on the host map them), or
  // the heap.
  bool shareableMemory = true;
};

// Parses argv; returns -1 to go on, else the exit status (help, bad flags).
int parseOptions(int argc, char** argv, TrainerOptions* out);
// "none" "fp16" "bf16" "e4m3" "e5m2".
const char* codecName(braidCodec_t codec);

}  // namespace braid::trainer
