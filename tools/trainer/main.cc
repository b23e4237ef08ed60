// braid-trainer: the reference trainer. It exercises braid end to end the
// way DLRM training at scale does (see trainer.h and exchange.h) and prints
// the loss, the accuracy and where each step's time went.
#include <braid/braid.h>

#include <cstdio>
#include <new>
#include <string>

#include "options.h"
#include "trainer.h"

int main(int argc, char** argv) {
  using namespace braid::trainer;
  TrainerOptions options;
  if (int rc = parseOptions(argc, argv, &options); rc >= 0) return rc;
  braidComm_t comm = nullptr;
  if (braidResult_t rc = braidCommInitFromEnv(&comm, nullptr); rc != braidSuccess) {
    std::fprintf(stderr, "braid-trainer: braidCommInitFromEnv failed [%s]: %s\n", braidGetErrorString(rc),
                 braidGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 1;
  braidCommUserRank(comm, &rank);
  braidCommCount(comm, &nranks);
  std::string error;
  try {
    Trainer trainer(options, comm, rank, nranks);
    error = trainer.run();
  } catch (const std::bad_alloc&) {
    error = std::string("no memory for the buffers (braidMemAlloc: ") + braidGetLastError(nullptr) +
            "; --memory host takes the exchange buffers from the heap)";
  }
  if (!error.empty()) {
    std::fprintf(stderr, "braid-trainer rank %d: %s\n", rank, error.c_str());
    braidCommAbort(comm);  // the others fail fast instead of waiting on this rank
    return 1;
  }
  return braidCommDestroy(comm) == braidSuccess ? 0 : 1;
}
