// The per-rank table under braid-trace's paragraph: the details the paragraph
// groups away, one row per dump.
#pragma once

#include <string>

#include "analyze.h"

namespace braid::trace {

// Columns: rank, host, pid, what it is doing, last completed op, queued ops,
// mean lateness in the common ops ("-" when there were none).
std::string table(const Report& report);

}  // namespace braid::trace
