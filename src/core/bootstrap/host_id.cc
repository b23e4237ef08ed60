#include "core/bootstrap/host_id.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace braid::bootstrap {

std::string localHostId() {
  std::string id;
  // TODO(lead): read through env::getString once BRAID_HOSTID is registered.
  if (const char* forced = std::getenv("BRAID_HOSTID"); forced != nullptr && *forced != '\0') {
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
