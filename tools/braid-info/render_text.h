// The human-readable form of braid-info's report.
#pragma once

#include <string>

#include "collect.h"

namespace braid::info {

// Everything but the environment table.
std::string renderText(const Collected& c);
// The environment table: name, value, default, help.
std::string renderEnv(const Json& env);

}  // namespace braid::info
