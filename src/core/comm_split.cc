#include "core/comm_split.h"

#include <algorithm>
#include <cstring>

#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/root.h"
#include "core/communicator.h"

namespace braid::core {
namespace {

// Bootstrap tags for handing out the new group's id; the parent's split counter
// keeps successive calls apart.
constexpr uint32_t kSplitTagBase = 0x40000000u;

// `members` in new-rank order, this rank among them: the first starts a root and
// sends the id to the others, then all join.
Status formGroup(Communicator& parent, const std::vector<int>& members, uint32_t tag,
                 std::shared_ptr<Communicator>* out) {
  bootstrap::Bootstrap& bs = parent.bootstrap();
  const int me = parent.rank();
  const int newRank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  const int n = static_cast<int>(members.size());
  uint8_t packed[bootstrap::UniqueId::kBytes] = {0};
  if (newRank == 0) {
    bootstrap::UniqueId id;
    bootstrap::RootOptions options;
    options.nranks = n;
    options.idleTimeoutMs = parent.config().timeoutMs;
    BRAID_RETURN_IF_ERROR(bootstrap::startRoot(parent.config().socketIfname, &id, options));
    id.pack(packed);
    for (int k = 1; k < n; ++k) BRAID_RETURN_IF_ERROR(bs.send(members[k], tag, packed, sizeof(packed)));
  } else {
    BRAID_RETURN_IF_ERROR(bs.recv(members[0], tag, packed, sizeof(packed)));
  }
  bootstrap::UniqueId id;
  BRAID_RETURN_IF_ERROR(bootstrap::UniqueId::unpack(packed, &id));
  return Communicator::create(n, id, newRank, parent.config(), out);
}

}  // namespace

Status splitCommunicator(Communicator& parent, int color, int key, std::shared_ptr<Communicator>* out) {
  out->reset();
  const int n = parent.nranks(), me = parent.rank();
  std::vector<int32_t> table(2 * static_cast<size_t>(n));
  table[2 * me] = color < 0 ? kSplitNoColor : color;
  table[2 * me + 1] = key;
  BRAID_RETURN_IF_ERROR(parent.bootstrap().allGather(table.data(), 2 * sizeof(int32_t)));
  const uint32_t tag = kSplitTagBase + parent.nextSplitSequence();
  if (color < 0) return Status::ok();
  std::vector<int> members;
  for (int r = 0; r < n; ++r)
    if (table[2 * r] == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return table[2 * a + 1] < table[2 * b + 1]; });
  return formGroup(parent, members, tag, out);
}

Status shrinkCommunicator(Communicator& parent, const std::vector<int>& exclude, std::shared_ptr<Communicator>* out) {
  out->reset();
  std::vector<int> members;
  for (int r = 0; r < parent.nranks(); ++r)
    if (std::find(exclude.begin(), exclude.end(), r) == exclude.end()) members.push_back(r);
  if (std::find(members.begin(), members.end(), parent.rank()) == members.end())
    return invalidArgument("braidCommShrink: this rank (" + std::to_string(parent.rank()) + ") is in excludeRanks");
  return formGroup(parent, members, kSplitTagBase + parent.nextSplitSequence(), out);
}

}  // namespace braid::core
