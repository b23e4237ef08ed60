// The topology file (format in FORMAT.md): text <-> HostTopology, with strict
// validation. Anything that is not a well-formed format-1 description is an
// InvalidArgument naming the place and the rule, never a crash or a guess.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "topo/model.h"

namespace braid::topo {

constexpr size_t kMaxTopologyFileBytes = 64u << 20;

// The whole file for these hosts: stable key order, one array entry per line.
std::string formatTopologyFile(const std::vector<HostTopology>& hosts);
Status parseTopologyFile(const std::string& text, std::vector<HostTopology>* hosts);

// The host of the file meant for `hostId` (see FORMAT.md); `source` becomes
// "file:<path>".
Status loadTopologyFile(const std::string& path, const std::string& hostId, HostTopology* out);
// Writes through a temporary file and a rename, so readers never see half a file.
Status saveTopologyFile(const std::string& path, const HostTopology& host);

}  // namespace braid::topo
