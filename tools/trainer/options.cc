#include "options.h"

#include <CLI/CLI.hpp>

namespace braid::trainer {
namespace {

const std::map<std::string, braidCodec_t> kCodecs = {{"none", braidCodecNone},
                                                     {"fp16", braidCodecFloat16},
                                                     {"bf16", braidCodecBfloat16},
                                                     {"e4m3", braidCodecFloat8e4m3},
                                                     {"e5m2", braidCodecFloat8e5m2}};

}  // namespace

const char* codecName(braidCodec_t codec) {
  for (const auto& [name, c] : kCodecs)
    if (c == codec) return name.c_str();
  return "?";
}

int parseOptions(int argc, char** argv, TrainerOptions* o) {
  CLI::App app{
      "braid-trainer: a DLRM-style model trained across ranks with braid, as ZionEX trains it: the MLP data\n"
      "parallel (gradients all-reduced), the embedding tables model parallel (table t on rank t % nranks, "
      "rows\n"
      "and gradients moved by all-to-all, optionally in 16 or 8 bits). Synthetic data from a hidden "
      "teacher.\n"
      "Run under a launcher, e.g.  braid-run -n 4 braid-trainer --steps 300"};
  app.add_option("--steps", o->steps, "Training steps")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--batch", o->batch, "Samples per rank per step")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--tables", o->data.tables, "Embedding tables")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--rows", o->data.rows, "Rows per table")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--dim", o->dim, "Embedding width")->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--pooling", o->data.pooling, "Rows summed per table per sample")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--dense", o->data.dense, "Dense features")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  app.add_option("--hidden", o->hidden, "MLP hidden units")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--lr", o->lr, "The MLP's SGD learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--embedding-lr", o->embeddingLr, "The tables' row-wise Adagrad learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o->seed, "Data and initial model")->capture_default_str();
  app.add_option("--forward-codec", o->forwardCodec,
                 "Wire format of the embeddings: none fp16 bf16 e4m3 e5m2")
      ->transform(CLI::CheckedTransformer(kCodecs))
      ->capture_default_str();
  app.add_option("--backward-codec", o->backwardCodec, "Wire format of their gradients")
      ->transform(CLI::CheckedTransformer(kCodecs))
      ->capture_default_str();
  app.add_option("--loss-scale", o->lossScale, "Scale of fp16 gradients on the wire")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--report-every", o->reportEvery, "Steps per report line")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--overlap", o->overlap,
                 "1: sum the MLP gradients on a braid stream while the tables update; 0: inline")
      ->capture_default_str();
  app.add_option("--checkpoint-dir", o->checkpointDir, "Where checkpoints go (shared by the ranks)");
  app.add_option("--checkpoint-every", o->checkpointEvery, "Steps between checkpoints (0: only at the end)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--resume", o->resume, "Start from the latest checkpoint in --checkpoint-dir");
  std::string memory = "shareable";
  app.add_option("--memory", memory,
                 "Where the exchange buffers live: shareable (braidMemAlloc: the ranks on a host read each "
                 "other's through mappings) or host (the heap)")
      ->check(CLI::IsMember({"shareable", "host"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o->shareableMemory = memory == "shareable";
  if (o->resume && o->checkpointDir.empty()) {
    std::fprintf(stderr, "braid-trainer: --resume needs --checkpoint-dir\n");
    return 2;
  }
  return -1;
}

}  // namespace braid::trainer
