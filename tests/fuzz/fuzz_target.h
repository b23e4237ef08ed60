// How a fuzz target is written, so that one source serves two builds.
//
//   BRAID_FUZZ_TARGET(unique_id) { ...; return 0; }
//
// defines `int braidFuzz_unique_id(const uint8_t*, size_t)`, the target's entry.
// In the libFuzzer build (BRAID_FUZZ=ON, each target its own executable compiled
// with BRAID_FUZZ_LIBFUZZER) the macro also defines LLVMFuzzerTestOneInput to
// call it. In the ordinary build every entry is linked into one GoogleTest
// binary that replays the checked-in corpus (corpus_replay_test.cc), so a gcc
// CI run still exercises every input the fuzzers ever kept.
//
// A target checks properties with BRAID_FUZZ_CHECK: a violated property aborts
// in both builds (libFuzzer then saves the input; the replay test dies, naming
// the corpus file it was replaying).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// Every target, in one place: the replay test and the CMake list follow it.
#define BRAID_FUZZ_TARGETS(X) \
  X(unique_id)                \
  X(bootstrap_protocol)       \
  X(socket_address)           \
  X(tcp_frame)                \
  X(tcp_conn_header)          \
  X(auth_handshake)           \
  X(tcp_recv)                 \
  X(control_frame)            \
  X(bootstrap_inbox)          \
  X(codec_decode)             \
  X(comm_topology)            \
  X(shm_setup)

#define BRAID_FUZZ_DECLARE(name) int braidFuzz_##name(const uint8_t* data, size_t size);
BRAID_FUZZ_TARGETS(BRAID_FUZZ_DECLARE)

namespace braid::fuzz {
// Name of the input being replayed (replay test only), printed on a failed check.
inline const char*& currentInput() {
  static const char* name = "";
  return name;
}
}  // namespace braid::fuzz

#define BRAID_FUZZ_CHECK(cond, what)                                                                  \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      std::fprintf(stderr, "%s:%d: fuzz property violated: %s (%s) [input %s]\n", __FILE__, __LINE__, \
                   what, #cond, ::braid::fuzz::currentInput());                                      \
      std::abort();                                                                                   \
    }                                                                                                 \
  } while (0)

#ifdef BRAID_FUZZ_LIBFUZZER
#define BRAID_FUZZ_TARGET(name)                                                    \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {        \
    return braidFuzz_##name(data, size);                                           \
  }                                                                                \
  int braidFuzz_##name(const uint8_t* data, size_t size)
#else
#define BRAID_FUZZ_TARGET(name) int braidFuzz_##name(const uint8_t* data, size_t size)
#endif
