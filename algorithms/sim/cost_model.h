// Cost model: the schedule simulator with time instead of data. Given the
// schedules of all ranks of one collective and an alpha-beta-gamma model of
// the fabric, it predicts when the last rank finishes, by a discrete-event pass
// over every rank's steps:
//
//  - a step is ready when its dependencies are done; a send or receive is
//    posted when it is ready and every earlier one on its (peer, direction)
//    channel is posted (the executor issues channels in schedule order);
//  - the k-th send a->b meets the k-th receive at b from a; the message starts
//    at max(send posted, receive posted, a's egress port free, b's ingress
//    port free) and occupies both ports for alpha + bytes * beta of its link
//    class (same host or not), so links serialize bytes per direction;
//    with CostParams::sharedNic, the messages across hosts of all ranks of a
//    host share one port per direction, the host's NIC;
//  - local work (reduce, the reduction half of recv-reduce, copy, divide) runs
//    on the rank's one executor thread, serialized, gamma seconds per byte.
//
// Contract: the schedules must match (see schedule.h) and be deadlock-free;
// otherwise InternalError names a stuck rank. Ranks are placed on hosts in
// blocks: ranks r and s share a host iff r / ranksPerHost == s / ranksPerHost.
// Not modelled: TCP buffering that lets a send finish before its receive is
// posted, memory contention.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "algorithms/schedule.h"
#include "base/status.h"

namespace braid::algo {

// One link class: seconds per message and seconds per byte.
struct LinkCost {
  double alpha = 0;
  double beta = 0;
  double time(double bytes) const { return alpha + beta * bytes; }
};

struct CostParams {
  LinkCost intra;     // between ranks of one host
  LinkCost inter;     // between hosts
  double gamma = 0;   // seconds per byte reduced (also charged for copies and divisions)
  int ranksPerHost = 1;
  // The ranks of a host cross to other hosts through one port per direction
  // (its NIC), as they do on a real cluster; off, every rank has its own.
  // The tuner turns it on. Every closed form counts it: the round-by-round
  // walks (rd all-gather, Bruck, the barrier) through their ports, the
  // halving and doubling rounds (rd, rhd, rh) as the busiest host's queue,
  // pairwise as the host's total, the double binary tree in its slot
  // bound; the ring, chain, binomial and hierarchical schedules cross once
  // per host and direction, so it does not touch them.
  // tests/unit/tuner's SharedNic cases hold each form to the simulation.
  bool sharedNic = false;

  bool sameHost(int a, int b) const { return a / ranksPerHost == b / ranksPerHost; }
  const LinkCost& link(int a, int b) const { return sameHost(a, b) ? intra : inter; }
  int hosts(int nranks) const { return (nranks + ranksPerHost - 1) / ranksPerHost; }
  // The slowest class a collective spanning `nranks` ranks uses.
  const LinkCost& widest(int nranks) const { return hosts(nranks) > 1 ? inter : intra; }
};

struct Prediction {
  double seconds = 0;  // when the last step of any rank finishes
  // The critical path: from the step that finished last, back through whatever
  // held each step up (the dependency that finished last, the message that had
  // the port before it, the step that had the executor before it).
  size_t criticalSteps = 0;
  size_t criticalMessages = 0;
  uint64_t criticalBytes = 0;
  // Totals over all ranks.
  size_t steps = 0;
  size_t messages = 0;
  uint64_t bytes = 0;
};

// All ranks' schedules, index = rank.
Status predictTime(const std::vector<const Schedule*>& schedules, const CostParams& params,
                   Prediction* out);

// Builds the schedule of each rank in turn and keeps only a compact copy
// (kind, peer, bytes, dependents), so that 1,024 ranks' schedules fit in memory.
using RankBuilder = std::function<Status(int rank, Schedule* out)>;
Status predictTime(int nranks, const RankBuilder& build, const CostParams& params, Prediction* out);

}  // namespace braid::algo
