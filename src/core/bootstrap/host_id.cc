#include "core/bootstrap/host_id.h"

#include <unistd.h>

#include <fstream>

#include "base/env.h"

namespace braid::bootstrap {

std::string localHostId() {
  std::string id;
  if (std::string forced = env::getString("BRAID_HOSTID"); !forced.empty()) {
    id = forced;
  } else {
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
    std::string boot;
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::getline(in, boot);
    id = std::string(host[0] ? host : "unknown-host") + ":" + boot;
  }
  if (id.size() > kMaxHostIdBytes) id.resize(kMaxHostIdBytes);
  return id;
}

}  // namespace braid::bootstrap
