// The verbs of fabric. Each returns fabric's exit code and prints its own
// messages ("fabric: ..." on stderr, results on stdout).
#pragma once

#include <csignal>

#include "options.h"

namespace braid::fabric {

inline constexpr int kExitNoPrivilege = 77;  // automake's "skipped", so test harnesses can skip

// Set by SIGINT / SIGTERM / SIGHUP while fabric sets up or measures; checked
// between steps so that an interrupted setup still tears down.
extern volatile std::sig_atomic_t gStop;

// Without root, says so and returns kExitNoPrivilege; else 0.
int requireRoot();

int fabricUp(const Options& opts);
int fabricDown(const Options& opts);
int fabricStatus(const Options& opts);
int fabricMeasure(const Options& opts);
// Takes no lock: it is meant for a fabric that a `fabric run` holds.
int fabricLink(const Options& opts);
int fabricRun(const Options& opts);  // launch.cc

void say(const std::string& message);  // "fabric: <message>" on stderr

// "link: 0.943 Gbit/s measured, 1 Gbit/s configured (host0 -> host1 over 1.75 s)",
// or "" and a message when the measurement failed. *bitsPerSec, when given,
// gets the measured rate.
bool reportLink(const FabricSpec& spec, int from, int to, double seconds, double* bitsPerSec = nullptr);

}  // namespace braid::fabric
