#include "options.h"

#include <CLI/CLI.hpp>

#include "rate.h"

namespace braid::fabric {

namespace {

constexpr const char* kDescription =
    "fabric: an emulated cluster on this machine. Each host is a network namespace\n"
    "(NAME-host0, NAME-host1, ...) with one veth link \"fab0\" to a bridge in its own\n"
    "namespace (NAME-br), address 10.77.0.(i+1)/24, every link shaped to --rate in\n"
    "both directions with tbf. Nothing is added to this machine's own namespace.\n"
    "Needs root (exit 77 without it).\n\n"
    "  fabric up --hosts H --rate 1gbit        build it (replacing stale leftovers)\n"
    "  fabric down                             remove it, and anything left by a killed run\n"
    "  fabric measure [--from 0 --to 1]        one TCP stream between two hosts\n"
    "  fabric run --hosts H --rate R [-P n] -- program args...\n"
    "                                          build (or reuse an identical `up` fabric),\n"
    "                                          measure the link, start H*n ranks wired\n"
    "                                          for braidCommInitFromEnv, tear down at the end\n"
    "  fabric link --host N down|up            cut host N's link (its switch port: packets\n"
    "                                          vanish both ways, no error reaches anyone)\n"
    "                                          or restore it; works on a running `run`\n"
    "  fabric status                           what exists";

void addName(CLI::App* sub, Options* opts) {
  sub->add_option("--name", opts->spec.name, "Fabric name (letters, digits, _)")
      ->capture_default_str()
      ->check([](const std::string& v) {
        return validFabricName(v) ? "" : "letters, digits and _ only, at most 32";
      });
}

void addShape(CLI::App* sub, Options* opts, std::string* rate, std::string* burst) {
  sub->add_option("--hosts", opts->spec.hosts, "Number of hosts")
      ->required()
      ->check(CLI::Range(1, kMaxHosts));
  sub->add_option("--rate", *rate, "Link rate, both directions (tc units: 200mbit, 1gbit, 125mbps)")
      ->required();
  sub->add_option("--burst", *burst,
                  "tbf bucket in bytes (tc units: 256kb); default: 4 ms of the rate, >= 64kb");
}

}  // namespace

std::optional<Options> parseOptions(int argc, const char* const* argv, int* exitCode) {
  Options opts;
  std::string rate, burst;
  CLI::App app{kDescription, "fabric"};
  app.require_subcommand(1);

  CLI::App* up = app.add_subcommand("up", "Build the fabric and leave it up");
  addName(up, &opts);
  addShape(up, &opts, &rate, &burst);

  CLI::App* down = app.add_subcommand("down", "Remove the fabric (and leftovers of a killed run)");
  addName(down, &opts);

  CLI::App* status = app.add_subcommand("status", "Show the fabric's state");
  addName(status, &opts);

  CLI::App* measure = app.add_subcommand("measure", "Measure one link of an up fabric with a TCP stream");
  addName(measure, &opts);
  measure->add_option("--from", opts.from, "Sending host")
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxHosts - 1));
  measure->add_option("--to", opts.to, "Receiving host")
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxHosts - 1));
  measure->add_option("--seconds", opts.measureSec, "Length of the stream")
      ->capture_default_str()
      ->check(CLI::Range(0.2, 30.0));

  CLI::App* link =
      app.add_subcommand("link", "Cut (down) or restore (up) one host's link, also during a run");
  addName(link, &opts);
  std::string linkState;
  link->add_option("--host", opts.host, "The host whose link changes")
      ->required()
      ->check(CLI::Range(0, kMaxHosts - 1));
  link->add_option("state", linkState, "down: cut the link; up: restore it")
      ->required()
      ->check(CLI::IsMember({"up", "down"}));

  CLI::App* run = app.add_subcommand("run", "Run ranks across the fabric's hosts");
  addName(run, &opts);
  addShape(run, &opts, &rate, &burst);
  run->add_option("-P,--ranks-per-host", opts.ranksPerHost, "Ranks in each host")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  run->add_option("--timeout", opts.timeoutSec, "Kill every rank after this many seconds, exit 124 (0: none)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--grace", opts.graceSec, "Seconds between SIGTERM and SIGKILL when stopping ranks")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run->add_option("--measure", opts.measureSec, "Seconds of raw link measurement first (0: skip)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 30.0));
  bool noPrefix = false;
  run->add_flag("--no-prefix", noPrefix, "Print rank output without the [rank] prefix");
  run->prefix_command();

  // CLI11 treats words after "--" as positionals of `run`, which has none, so
  // the program after "--" is split off here; without "--", prefix_command()
  // hands over at the first word that is not an option of ours.
  std::vector<std::string> afterDashes;
  int ours = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      ours = i;
      afterDashes.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  try {
    app.parse(ours, argv);
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return std::nullopt;
  }
  auto usage = [&](const std::string& msg) {
    std::fprintf(stderr, "fabric: %s\nRun with --help for more information.\n", msg.c_str());
    *exitCode = 2;
    return std::nullopt;
  };

  if (up->parsed() || run->parsed()) {
    std::optional<uint64_t> bits = parseRate(rate);
    if (!bits) return usage("--rate " + rate + ": expected a tc rate such as 200mbit or 1gbit");
    opts.spec.rateBits = *bits;
    opts.spec.burstBytes = defaultBurstBytes(*bits);
    if (!burst.empty()) {
      std::optional<uint64_t> bytes = parseSize(burst);
      if (!bytes || *bytes < 2048) return usage("--burst " + burst + ": expected a size of at least 2kb");
      opts.spec.burstBytes = *bytes;
    }
  }
  if (up->parsed()) opts.verb = Verb::kUp;
  if (down->parsed()) opts.verb = Verb::kDown;
  if (status->parsed()) opts.verb = Verb::kStatus;
  if (measure->parsed()) {
    opts.verb = Verb::kMeasure;
    if (opts.from == opts.to) return usage("--from and --to must differ");
  }
  if (link->parsed()) {
    opts.verb = Verb::kLink;
    opts.linkUp = linkState == "up";
  }
  if (!run->parsed() && ours != argc) return usage("-- is only for `fabric run`");
  if (run->parsed()) {
    opts.verb = Verb::kRun;
    opts.prefix = !noPrefix;
    std::vector<std::string> rest = run->remaining();
    if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-')
      return usage("run: unknown option " + rest.front());
    // "run prog a -- b": the program began before the "--", which is its own.
    if (!rest.empty() && ours != argc) rest.push_back("--");
    opts.command = rest;
    opts.command.insert(opts.command.end(), afterDashes.begin(), afterDashes.end());
    if (opts.command.empty()) return usage("run: no program given");
  }
  return opts;
}

}  // namespace braid::fabric
