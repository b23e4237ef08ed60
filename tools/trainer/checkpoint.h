// Training state on disk, so a job that lost a host resumes where it was,
// with the same or another rank count (tables are saved one file each, not
// per rank).
//
//   DIR/step-<S>/mlp.bin       the replicated MLP (rank 0 writes it)
//   DIR/step-<S>/table<t>.bin  table t (its owner writes it)
//   DIR/step-<S>/table<t>.adagrad.bin  its Adagrad state
//   DIR/latest                 "<S>": written by rank 0 (to a temporary name,
//                              then renamed) only after every rank has
//                              written its files, so it names complete
//                              checkpoints only; older step directories then go.
//
// Each .bin: magic "BRCK", version, what it holds (0 MLP, 1 + t for table t),
// the step, the float count, then the floats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid::trainer {

std::string stepDir(const std::string& dir, int64_t step);

// "" on success, else what failed.
std::string writeBlob(const std::string& path, uint32_t what, int64_t step, const std::vector<float>& data);
// Fails on a missing file, another magic, version, kind, step or size.
std::string readBlob(const std::string& path, uint32_t what, int64_t step, std::vector<float>* data);

// Rank 0, after every rank wrote step `step`: point DIR/latest at it and drop
// older step directories.
std::string commitStep(const std::string& dir, int64_t step);
// The step DIR/latest names; -1 when there is none.
int64_t latestStep(const std::string& dir);

}  // namespace braid::trainer
