// The one registry of BRAID_* environment variables. Every variable braid reads
// is declared once in env.cc with its default and help text; `braid-info --env`
// prints the table, and reading an undeclared name is a bug caught in tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid::env {

struct Variable {
  const char* name;
  const char* defaultValue;  // as a user would write it; "" when unset by default
  const char* help;
};

// Every declared variable, in the order they are documented.
const std::vector<Variable>& all();

// The raw value if set in the environment (not the default).
std::optional<std::string> raw(const char* name);
// The value, or its declared default.
std::string getString(const char* name);
// Parsed as a decimal integer; the default when unset. A malformed value is
// reported through *error (when given) and the default is returned.
int64_t getInt(const char* name, std::string* error = nullptr);
bool getBool(const char* name);

}  // namespace braid::env
