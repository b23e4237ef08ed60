// braid-run: a local launcher for braid programs. See options.cc for usage.
#include <unistd.h>

#include <string>
#include <vector>

#include "options.h"
#include "output.h"
#include "rank_env.h"
#include "rendezvous.h"
#include "supervisor.h"

int main(int argc, char** argv) {
  using namespace braid::run;
  int exitCode = 0;
  std::optional<Options> opts = parseOptions(argc, argv, &exitCode);
  if (!opts) return exitCode;

  std::string error;
  Rendezvous rv;
  rv.host = opts->addr;
  rv.port = pickFreePort(rv.host, &error);
  if (rv.port == 0) {
    note(error);
    return 1;
  }
  rv.secret = generateSecret(&error);
  if (rv.secret.empty()) {
    note(error);
    return 1;
  }
  std::vector<std::string> baseEnv;
  for (char** e = environ; *e != nullptr; ++e) baseEnv.emplace_back(*e);
  return supervise(*opts, rv, baseEnv);
}
