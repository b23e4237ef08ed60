#include "core/comm_topology.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "base/env.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/host_id.h"
#include "topo/detect.h"

namespace braid::core {
Status localHostTopology(const topo::HostTopology** out) {
  static std::once_flag once;
  static topo::HostTopology host;
  static Status status;
  std::call_once(once, [] {
    status = topo::localTopology(&host);
    if (!status.isOk() && !env::raw("BRAID_TOPO_FILE")) {
      BRAID_WARN("topology detection failed, continuing without it: %s", status.message().c_str());
      host = topo::HostTopology();
      host.hostId = bootstrap::localHostId();
      status = Status::ok();
    }
  });
  *out = &host;
  return status;
}

Status decodeGatheredTopology(const std::vector<uint64_t>& sizes, const std::vector<char>& slots,
                              topo::CommTopology* out) {
  const size_t n = sizes.size();
  if (n == 0) return invalidArgument("topology: no ranks");
  uint64_t slot = 0;
  for (uint64_t s : sizes) slot = std::max(slot, s);
  if (slot > topo::kMaxRankViewBytes)
    return remoteError("a rank's topology description is " + std::to_string(slot) + " bytes, over the limit");
  if (slots.size() != n * slot)
    return invalidArgument("topology: " + std::to_string(slots.size()) + " gathered bytes for " +
                           std::to_string(n) + " slots of " + std::to_string(slot));
  std::vector<topo::RankView> views(n);
  for (size_t r = 0; r < n; ++r) {
    std::string bytes(slots.data() + r * slot, sizes[r]);
    BRAID_RETURN_IF_ERROR(
        topo::decodeRankView(bytes, &views[r]).prefix("rank " + std::to_string(r) + "'s topology"));
  }
  return topo::mergeRankViews(std::move(views), out);
}

Status gatherTopology(bootstrap::Bootstrap& bs, topo::CommTopology* out) {
  const topo::HostTopology* host = nullptr;
  BRAID_RETURN_IF_ERROR(Status(localHostTopology(&host)).prefix("topology"));
  topo::RankView mine;
  BRAID_RETURN_IF_ERROR(topo::makeRankView(*host, bs.rank(), &mine));
  const std::string blob = topo::encodeRankView(mine);

  // Views differ in size: agree on the largest, then gather fixed-size slots
  // (8-byte length + payload).
  const int n = bs.nranks();
  std::vector<uint64_t> sizes(n);
  sizes[bs.rank()] = blob.size();
  BRAID_RETURN_IF_ERROR(bs.allGather(sizes.data(), sizeof(uint64_t)));
  uint64_t slot = 0;
  for (uint64_t s : sizes) slot = std::max(slot, s);
  if (slot > topo::kMaxRankViewBytes)
    return remoteError("a rank's topology description is " + std::to_string(slot) + " bytes, over the limit");
  std::vector<char> all(static_cast<size_t>(n) * slot);
  std::memcpy(all.data() + bs.rank() * slot, blob.data(), blob.size());
  if (slot > 0) BRAID_RETURN_IF_ERROR(bs.allGather(all.data(), slot));
  BRAID_RETURN_IF_ERROR(decodeGatheredTopology(sizes, all, out));
  BRAID_INFO("topology: %d rank(s) on %zu host(s)", n, out->hosts.size());
  return Status::ok();
}

}  // namespace braid::core
