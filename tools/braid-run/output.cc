#include "output.h"

#include <unistd.h>

#include <cerrno>

namespace braid::run {

namespace {

void writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

std::string formatLine(std::string_view prefix, std::string_view line) {
  std::string s;
  s.reserve(prefix.size() + line.size() + 1);
  s.append(prefix);
  s.append(line);
  s.push_back('\n');
  return s;
}

void writeLine(int fd, std::string_view prefix, std::string_view line) {
  writeAll(fd, formatLine(prefix, line));
}

void note(const std::string& message) { writeAll(STDERR_FILENO, "braid-run: " + message + "\n"); }

}  // namespace braid::run
