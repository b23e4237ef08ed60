// A host topology as a readable tree (braid-info, logs at INFO level).
#pragma once

#include <string>

#include "topo/model.h"

namespace braid::topo {

// Multi-line text, each line starting with `indent`; ends with a newline.
std::string formatTree(const HostTopology& host, const std::string& indent = "");

// "32 KiB", "1.5 GiB".
std::string formatBytes(uint64_t bytes);

}  // namespace braid::topo
