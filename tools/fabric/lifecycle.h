// Building and removing a fabric's namespaces. Callers hold the FabricLock.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "topology.h"

namespace braid::fabric {

// Names of the network namespaces `ip netns` knows (entries of /run/netns).
std::vector<std::string> listNamespaces();

// This fabric's namespaces that exist now.
std::vector<std::string> fabricNamespaces(const std::string& fabric);

// Removes every namespace of the fabric, whatever made it: processes still
// inside get SIGKILL (they can only be ranks or programs started there, which
// would otherwise keep the namespace and its links alive), then `ip netns del`.
// Deleting a namespace deletes its veth ends, and with them the peers and the
// qdiscs. Returns how many namespaces it removed; failures go to *errors.
int removeFabric(const std::string& fabric, std::vector<std::string>* errors);

// Builds the fabric (buildCommands); on failure or when *stop becomes non-zero
// part-way, removes what it made and returns false with *error set.
bool createFabric(const FabricSpec& spec, const volatile std::sig_atomic_t* stop, std::string* error);

// True when every namespace of a fabric of spec.hosts hosts exists.
bool fabricComplete(const FabricSpec& spec);

}  // namespace braid::fabric
