// fabric: an emulated cluster of network-namespace hosts. See options.cc for usage.
#include <csignal>
#include <cstring>

#include "options.h"
#include "rank_exec.h"
#include "verbs.h"

namespace {

void onStop(int sig) { braid::fabric::gStop = sig; }

}  // namespace

int main(int argc, char** argv) {
  using namespace braid::fabric;
  if (argc > 1 && std::strcmp(argv[1], "_rank") == 0) return rankExec(argc, argv);

  int exitCode = 0;
  std::optional<Options> opts = parseOptions(argc, argv, &exitCode);
  if (!opts) return exitCode;
  if (opts->verb == Verb::kStatus) return fabricStatus(*opts);
  if (int rc = requireRoot(); rc != 0) return rc;

  // Until `run` hands over to its supervisor (which installs its own
  // handlers), a stop request is only noted: the verb finishes its current
  // step and removes what it built instead of dying half-way.
  struct sigaction sa {};
  sa.sa_handler = onStop;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

  switch (opts->verb) {
    case Verb::kUp:
      return fabricUp(*opts);
    case Verb::kDown:
      return fabricDown(*opts);
    case Verb::kMeasure:
      return fabricMeasure(*opts);
    case Verb::kRun:
      return fabricRun(*opts);
    case Verb::kLink:
      return fabricLink(*opts);
    case Verb::kStatus:
      break;
  }
  return fabricStatus(*opts);
}
