#include "verbs.h"

#include <unistd.h>

#include <cstdio>

#include "exec.h"
#include "lifecycle.h"
#include "measure.h"
#include "rate.h"
#include "state.h"

namespace braid::fabric {

volatile std::sig_atomic_t gStop = 0;

void say(const std::string& message) { std::fprintf(stderr, "fabric: %s\n", message.c_str()); }

int requireRoot() {
  if (geteuid() == 0) return 0;
  say("needs root: it creates network namespaces, veth links and tc qdiscs (run it with sudo)");
  return kExitNoPrivilege;
}

namespace {

std::string describe(const FabricSpec& s) {
  return std::to_string(s.hosts) + " host(s), " + formatRate(static_cast<double>(s.rateBits)) +
         " per link, burst " + std::to_string(s.burstBytes) + " B";
}

int reportRemoval(const std::string& name, int removed, const std::vector<std::string>& errors) {
  for (const std::string& e : errors) say(e);
  if (removed > 0) say("removed " + std::to_string(removed) + " namespace(s) of fabric " + name);
  return errors.empty() ? 0 : 1;
}

}  // namespace

bool reportLink(const FabricSpec& spec, int from, int to, double seconds, double* bitsPerSec) {
  std::string error;
  std::optional<LinkMeasurement> m = measureLink(spec.name, from, to, seconds, &gStop, &error);
  if (!m) {
    say("link measurement host" + std::to_string(from) + " -> host" + std::to_string(to) +
        " failed: " + error);
    return false;
  }
  char line[256];
  std::snprintf(
      line, sizeof(line), "link: %.3f Gbit/s measured, %s configured (host%d -> host%d over %.2f s)\n",
      m->bitsPerSec / 1e9, formatRate(static_cast<double>(spec.rateBits)).c_str(), from, to, m->seconds);
  std::fputs(line, stdout);
  std::fflush(stdout);
  if (bitsPerSec) *bitsPerSec = m->bitsPerSec;
  return true;
}

int fabricUp(const Options& opts) {
  std::string error;
  std::optional<FabricLock> lock = FabricLock::tryAcquire(opts.spec.name, &error);
  if (!lock) return say(error), 1;
  std::vector<std::string> errors;
  const int stale = removeFabric(opts.spec.name, &errors);
  for (const std::string& e : errors) say(e);
  if (stale > 0) say("removed " + std::to_string(stale) + " stale namespace(s) first");
  removeState(opts.spec.name);
  if (!createFabric(opts.spec, &gStop, &error))
    return say("cannot build fabric " + opts.spec.name + ": " + error), 1;
  if (!writeState({opts.spec, "up", static_cast<long>(getpid())}, &error)) {
    say(error);
    removeFabric(opts.spec.name, &errors);
    return 1;
  }
  std::printf("fabric %s is up: %s\n", opts.spec.name.c_str(), describe(opts.spec).c_str());
  return 0;
}

int fabricDown(const Options& opts) {
  std::string error;
  std::optional<FabricLock> lock = FabricLock::tryAcquire(opts.spec.name, &error);
  if (!lock) return say(error + "; stop it first (it tears the fabric down itself)"), 1;
  std::vector<std::string> errors;
  const int removed = removeFabric(opts.spec.name, &errors);
  removeState(opts.spec.name);
  if (errors.empty()) lock->removeOnRelease();
  return reportRemoval(opts.spec.name, removed, errors);
}

int fabricStatus(const Options& opts) {
  std::optional<FabricState> st = readState(opts.spec.name);
  const std::vector<std::string> present = fabricNamespaces(opts.spec.name);
  if (!st && present.empty()) {
    std::printf("fabric %s: down\n", opts.spec.name.c_str());
    return 0;
  }
  if (st) {
    std::printf("fabric %s: made by `fabric %s` (pid %ld): %s\n", opts.spec.name.c_str(), st->owner.c_str(),
                st->pid, describe(st->spec).c_str());
  }
  std::printf("namespaces:");
  for (const std::string& ns : present) std::printf(" %s", ns.c_str());
  std::printf("\n");
  return 0;
}

int fabricMeasure(const Options& opts) {
  std::optional<FabricState> st = readState(opts.spec.name);
  if (!st || !fabricComplete(st->spec)) return say("fabric " + opts.spec.name + " is not up"), 1;
  if (opts.from >= st->spec.hosts || opts.to >= st->spec.hosts)
    return say("fabric " + opts.spec.name + " has only " + std::to_string(st->spec.hosts) + " host(s)"), 2;
  return reportLink(st->spec, opts.from, opts.to, opts.measureSec) ? 0 : 1;
}

// The fabric's lock is not taken: a `fabric run` holds it for its whole life,
// and cutting a link under running ranks is what this verb is for. It changes
// one switch port's state and nothing else, so it cannot disturb the lock
// holder's setup or teardown (a port of a namespace being deleted just fails).
int fabricLink(const Options& opts) {
  std::optional<FabricState> st = readState(opts.spec.name);
  if (!st || !fabricComplete(st->spec)) return say("fabric " + opts.spec.name + " is not up"), 1;
  if (opts.host >= st->spec.hosts)
    return say("fabric " + opts.spec.name + " has only " + std::to_string(st->spec.hosts) + " host(s)"), 2;
  const std::vector<std::string> cmd = linkCommand(opts.spec.name, opts.host, opts.linkUp);
  if (ToolResult r = runTool(cmd); r.exitCode != 0) return say(joinArgv(cmd) + ": " + r.output), 1;
  std::printf("fabric %s: host%d's link is %s\n", opts.spec.name.c_str(), opts.host,
              opts.linkUp ? "up" : "down (cut at its switch port)");
  return 0;
}

}  // namespace braid::fabric
