// The seed corpus, generated: valid encodings made by the library's own
// encoders (so fuzzing starts deep inside each parser) plus hand-picked edge
// cases. seed_gen writes them under tests/fuzz/corpus/<target>/<name>; the
// replay test checks the checked-in files still equal what this generates, so
// a wire-format change that leaves the seeds stale fails a test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid::fuzz {

struct Seed {
  std::string target;  // a name from BRAID_FUZZ_TARGETS
  std::string name;    // file name: what the input is, e.g. "valid_v4"
  std::vector<uint8_t> bytes;
};

std::vector<Seed> generateSeeds();

// Seeds of the targets added with seeds_peer.cc: bootstrap_inbox,
// codec_decode, comm_topology, shm_setup.
void peerSeeds(std::vector<Seed>* out);

}  // namespace braid::fuzz
