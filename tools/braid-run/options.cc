#include "options.h"

#include <CLI/CLI.hpp>

namespace braid::run {

namespace {

constexpr const char* kDescription =
    "braid-run: start N ranks of a program on this machine, wired for "
    "braidCommInitFromEnv.\n\n"
    "Each rank gets BRAID_RANK, BRAID_WORLD_SIZE, BRAID_ROOT_ADDR=host:port and a fresh\n"
    "BRAID_SECRET, plus torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
    "MASTER_ADDR and MASTER_PORT. Output is printed line by line, prefixed with [rank].\n"
    "If a rank fails, the others are stopped (SIGTERM, then SIGKILL after --grace)\n"
    "and braid-run exits with that rank's code (128+signal if it was killed).\n"
    "Exit 124 on --timeout.\n\n"
    "Synopsis: braid-run -n N [options] [--] program [args...]";

}  // namespace

std::optional<Options> parseOptions(int argc, const char* const* argv, int* exitCode) {
  Options opts;
  CLI::App app{kDescription, "braid-run"};
  app.add_option("-n,--nranks", opts.nranks, "Number of ranks to start")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--addr", opts.addr, "Address rank 0 listens on for the rendezvous")->capture_default_str();
  app.add_option("--timeout", opts.timeoutSec,
                 "Kill every rank after this many seconds and exit 124 (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--grace", opts.graceSec, "Seconds between SIGTERM and SIGKILL when stopping ranks")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  bool noPrefix = false;
  app.add_flag("--no-prefix", noPrefix, "Print rank output without the [rank] prefix");
  app.add_flag("--quiet-ranks", opts.quietRanks,
               "Show only rank 0's stdout (stderr of every rank is still shown)");
  std::string bindTo = "none";
  app.add_option("--bind-to", bindTo,
                 "core: pin rank r to the r-th CPU braid-run may run on (wrapping around), as mpirun "
                 "--bind-to core does; none: leave placement to the scheduler, which may put two busy "
                 "ranks on one core for a while")
      ->capture_default_str()
      ->check(CLI::IsMember({"core", "none"}));
  // The first word that is not ours starts the command; its own options follow.
  app.prefix_command();
  try {
    app.parse(argc, argv);
    opts.bindToCore = bindTo == "core";
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return std::nullopt;
  }
  opts.prefix = !noPrefix;
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  if (rest.empty()) {
    std::fprintf(stderr, "braid-run: no program given\nRun with --help for more information.\n");
    *exitCode = 2;
    return std::nullopt;
  }
  // An option we do not know, placed before the program, is a typo rather
  // than a program called "--foo"; "--" lets a user run such a program anyway.
  if (rest.size() == app.remaining().size() && rest.front().size() > 1 && rest.front()[0] == '-') {
    std::fprintf(stderr, "braid-run: unknown option %s\nRun with --help for more information.\n",
                 rest.front().c_str());
    *exitCode = 2;
    return std::nullopt;
  }
  opts.command = std::move(rest);
  return opts;
}

}  // namespace braid::run
