// Gathers everything braid-info reports into one JSON document, the single
// source for both the text and the --json output, so the two never disagree.
#pragma once

#include <nlohmann/json.hpp>

#include "topo/model.h"

namespace braid::info {

using Json = nlohmann::ordered_json;

struct Collected {
  Json doc;                  // version, build, topology, transports, algorithms, env
  bool haveTopology = false;
  topo::HostTopology topology;  // for the text tree
};

// Never fails: a part that cannot be found says why in its place.
Collected collect();

// Every BRAID_* variable: name, value (null when unset), default, help.
Json envTable();

}  // namespace braid::info
