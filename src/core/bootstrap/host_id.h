// The string that tells whether two ranks share a host (and so can use shared
// memory): "hostname:boot_id" from /proc/sys/kernel/random/boot_id, so that
// two machines cloned with the same hostname still differ. BRAID_HOSTID
// overrides it (containers on one host that cannot share memory, or tests that
// pretend to be several hosts).
#pragma once

#include <string>

namespace braid::bootstrap {

constexpr size_t kMaxHostIdBytes = 255;

// Never empty; at most kMaxHostIdBytes (longer values are truncated).
std::string localHostId();

}  // namespace braid::bootstrap
