// New communicators from an existing one: split by color (braidCommSplit) and
// shrink to the survivors of a failure (braidCommShrink).
//
// Both use the parent's bootstrap, which is independent of the data
// connections and so still works on a communicator in error state: the first
// member of each new group starts a fresh rendezvous root (new secret) and
// hands its unique id to the other members over the bootstrap; then every
// member forms the new communicator as braidCommInitRank would.
#pragma once

#include <memory>
#include <vector>

#include "base/status.h"

namespace braid::core {

class Communicator;

constexpr int kSplitNoColor = -1;

// Collective over every rank of `parent`. color < 0: this rank joins no new
// communicator (*out stays null). New ranks follow (key, parent rank).
Status splitCommunicator(Communicator& parent, int color, int key, std::shared_ptr<Communicator>* out);
// Called by every rank of `parent` that is not in `exclude` (the excluded ranks
// may be dead). New ranks keep the parent's order.
Status shrinkCommunicator(Communicator& parent, const std::vector<int>& exclude, std::shared_ptr<Communicator>* out);

}  // namespace braid::core
