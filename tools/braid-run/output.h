// Writing rank output lines to braid-run's own stdout / stderr.
#pragma once

#include <string>
#include <string_view>

namespace braid::run {

// prefix + line + '\n' (pure; what writeLine writes).
std::string formatLine(std::string_view prefix, std::string_view line);

// Writes the formatted line with a single write(2) where the kernel allows
// (pipes: up to PIPE_BUF bytes are atomic), retrying on EINTR and partial
// writes. Errors (a closed pipe after `| head`) are ignored: the ranks go on.
void writeLine(int fd, std::string_view prefix, std::string_view line);

// "braid-run: <message>\n" on stderr.
void note(const std::string& message);

}  // namespace braid::run
