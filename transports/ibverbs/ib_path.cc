#include "transports/ibverbs/ib_path.h"

#include <string>

#include "base/env.h"

namespace braid::ibverbs {
namespace {

Status readInRange(const char* name, int64_t lowest, int64_t highest, uint8_t* out) {
  std::string error;
  const int64_t value = env::getInt(name, &error);
  if (!error.empty()) return invalidArgument(error);
  if (value < lowest || value > highest)
    return invalidArgument(std::string(name) + "=" + std::to_string(value) +
                           " is out of range: " + std::to_string(lowest) + " to " + std::to_string(highest));
  *out = static_cast<uint8_t>(value);
  return Status::ok();
}

}  // namespace

Status IbPath::fromEnvironment(IbPath* out) {
  IbPath path;
  BRAID_RETURN_IF_ERROR(readInRange("BRAID_IB_TC", 0, 255, &path.trafficClass));
  BRAID_RETURN_IF_ERROR(readInRange("BRAID_IB_SL", 0, 15, &path.serviceLevel));
  BRAID_RETURN_IF_ERROR(readInRange("BRAID_IB_TIMEOUT", 1, 31, &path.timeout));
  BRAID_RETURN_IF_ERROR(readInRange("BRAID_IB_RETRY_CNT", 0, 7, &path.retryCount));
  *out = path;
  return Status::ok();
}

}  // namespace braid::ibverbs
