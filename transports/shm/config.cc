#include "transports/shm/config.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "base/env.h"

namespace braid::shm {
namespace {

// Unset or empty: *value unchanged.
Status readInt(const char* name, int64_t min, int64_t max, int64_t* value) {
  auto text = env::raw(name);
  if (!text || text->empty()) return Status::ok();
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text->c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    return invalidArgument(std::string(name) + "='" + *text + "': expected an integer in " + std::to_string(min) +
                           ".." + std::to_string(max));
  *value = v;
  return Status::ok();
}

}  // namespace

Status ShmConfig::validate() const {
  if (ringBytes < (size_t{64} << 10) || ringBytes > (size_t{256} << 20) || (ringBytes & (ringBytes - 1)) != 0)
    return invalidArgument("shm: ring size " + std::to_string(ringBytes) +
                           " must be a power of two between 64 KiB and 256 MiB");
  if (spinUs < 0) return invalidArgument("shm: negative spin time");
  return Status::ok();
}

Status ShmConfig::fromEnv(ShmConfig* out) {
  ShmConfig c;
  int64_t ring = static_cast<int64_t>(c.ringBytes), threshold = static_cast<int64_t>(c.cmaThreshold);
  int64_t spin = c.spinUs, push = c.push ? 1 : 0;
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SHM_RING_BYTES", 64 << 10, int64_t{256} << 20, &ring));
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SHM_CMA_THRESHOLD", 0, INT64_MAX, &threshold));
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SHM_SPIN_US", 0, 1000000, &spin));
  BRAID_RETURN_IF_ERROR(readInt("BRAID_SHM_PUSH", 0, 1, &push));
  c.ringBytes = static_cast<size_t>(ring);
  c.cmaThreshold = static_cast<size_t>(threshold);
  c.spinUs = static_cast<int>(spin);
  c.push = push != 0;
  BRAID_RETURN_IF_ERROR(c.validate());
  *out = c;
  return Status::ok();
}

}  // namespace braid::shm
