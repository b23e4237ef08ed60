// fabric run: the fabric's life wrapped around one braid-run style job.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>

#include "lifecycle.h"
#include "netns.h"
#include "rank_env.h"
#include "rate.h"
#include "rendezvous.h"
#include "state.h"
#include "supervisor.h"
#include "topology.h"
#include "verbs.h"

namespace braid::fabric {

namespace {

bool sameShape(const FabricSpec& a, const FabricSpec& b) {
  return a.hosts == b.hosts && a.rateBits == b.rateBits && a.burstBytes == b.burstBytes;
}

std::string selfPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "fabric";
  return std::string(buf, static_cast<size_t>(n));
}

// The caller's environment with our interface selection instead of theirs.
// BRAID_HOSTID is set per rank by the _rank helper. The tuner is told the
// link's rate (measured, else configured), as a cluster's admin would set
// it, unless the caller chose one: its default is a 1.5 GB/s network, and
// at a tenth of that it would pick log-round all-gathers and reduce-scatters
// that the ring beats 2x here.
std::vector<std::string> rankBaseEnv(double linkBitsPerSec) {
  std::vector<std::string> env;
  bool linkGiven = false;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("BRAID_SOCKET_IFNAME=", 0) == 0 || entry.rfind("BRAID_HOSTID=", 0) == 0) continue;
    linkGiven |= entry.rfind("BRAID_LINK_BETA_GBPS=", 0) == 0;
    env.push_back(entry);
  }
  env.push_back(std::string("BRAID_SOCKET_IFNAME==") + kHostIfname);
  if (!linkGiven && linkBitsPerSec > 0) {
    char rate[64];
    std::snprintf(rate, sizeof(rate), "BRAID_LINK_BETA_GBPS=%.4f", linkBitsPerSec / 8e9);
    env.push_back(rate);
  }
  return env;
}

// Decides whether this run builds the fabric (and so tears it down) or reuses
// one that `fabric up` left with the same shape. nullopt: refuse, *error set.
std::optional<bool> mustBuild(const FabricSpec& spec, std::string* error) {
  std::optional<FabricState> st = readState(spec.name);
  if (!st || st->owner != "up" || !fabricComplete(st->spec)) return true;  // nothing, or leftovers
  if (sameShape(st->spec, spec)) return false;
  *error = "fabric " + spec.name + " is up with a different shape (" + std::to_string(st->spec.hosts) +
           " host(s), " + formatRate(static_cast<double>(st->spec.rateBits)) +
           "); run `fabric down` first or pick another --name";
  return std::nullopt;
}

int runRanks(const Options& opts, double linkBitsPerSec) {
  const FabricSpec& spec = opts.spec;
  std::string error;
  run::Rendezvous rv;
  rv.host = hostAddress(0);
  rv.port = freePortIn(hostNamespace(spec.name, 0), rv.host, &error);
  if (rv.port != 0) rv.secret = run::generateSecret(&error);
  if (rv.secret.empty()) return say(error), 1;

  run::Options ro;
  ro.nranks = spec.hosts * opts.ranksPerHost;
  ro.addr = rv.host;
  ro.timeoutSec = opts.timeoutSec;
  ro.graceSec = opts.graceSec;
  ro.prefix = opts.prefix;
  ro.command = {selfPath(), "_rank", spec.name, std::to_string(opts.ranksPerHost), "--"};
  ro.command.insert(ro.command.end(), opts.command.begin(), opts.command.end());
  return run::supervise(ro, rv, rankBaseEnv(linkBitsPerSec));
}

}  // namespace

int fabricRun(const Options& opts) {
  const FabricSpec& spec = opts.spec;
  std::string error;
  std::optional<FabricLock> lock = FabricLock::tryAcquire(spec.name, &error);
  if (!lock) return say(error), 1;
  std::optional<bool> build = mustBuild(spec, &error);
  if (!build) return say(error), 1;

  std::vector<std::string> errors;
  auto teardown = [&] {
    if (!*build) return;
    removeFabric(spec.name, &errors);
    removeState(spec.name);
    if (errors.empty()) lock->removeOnRelease();
    for (const std::string& e : errors) say(e);
  };
  if (*build) {
    const int stale = removeFabric(spec.name, &errors);
    if (stale > 0) say("removed " + std::to_string(stale) + " stale namespace(s) of a previous run first");
    removeState(spec.name);
    // Recorded before building, so that a run killed half-way is recognised.
    if (!writeState({spec, "run", static_cast<long>(getpid())}, &error)) return say(error), 1;
    if (!createFabric(spec, &gStop, &error)) {
      teardown();
      return say("cannot build fabric " + spec.name + ": " + error), gStop != 0 ? 128 + gStop : 1;
    }
  }

  int rc = 0;
  double linkBits = static_cast<double>(spec.rateBits);
  if (opts.measureSec > 0 && spec.hosts >= 2 && !reportLink(spec, 0, 1, opts.measureSec, &linkBits)) rc = 1;
  if (gStop != 0) rc = 128 + gStop;
  if (rc == 0) rc = runRanks(opts, linkBits);
  teardown();
  return rc;
}

}  // namespace braid::fabric
