// The human-readable form of a Report: one paragraph that says what happened,
// then a table with a row per rank. render_json.h gives the same for scripts.
#pragma once

#include <string>

#include "analyze.h"

namespace braid::trace {

// The paragraph, as one line (tests and --json use it as is).
std::string summary(const Report& report);

// summary() wrapped to 100 columns, a blank line, the table (render_table.h),
// with control characters from the dumps made harmless for a terminal.
std::string renderText(const Report& report);

}  // namespace braid::trace
