// Turns the text of one dump into a Dump, checking every field the analysis
// reads: a file that is not a braid-trace dump is an error naming the file and
// the field, never a crash or a silently wrong answer. Unknown fields are
// ignored, so newer dumps with more fields still load.
#pragma once

#include <string>

#include "dump.h"

namespace braid::trace {

// On success fills *out and returns "". On failure returns a message that
// starts with `name` (the file) and says what is wrong; *out is then unspecified.
std::string parseDump(const std::string& text, const std::string& name, Dump* out);

}  // namespace braid::trace
