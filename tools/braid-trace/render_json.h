// The --json form of a Report, for scripts: every finding of the paragraph as
// data, plus the paragraph itself under "summary".
#pragma once

#include <nlohmann/json.hpp>

#include "analyze.h"

namespace braid::trace {

nlohmann::ordered_json toJson(const Report& report);

}  // namespace braid::trace
