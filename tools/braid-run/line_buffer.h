// Cuts a byte stream (one rank's stdout or stderr) into whole lines, so that
// braid-run can print each line with one write and lines of different ranks
// never interleave mid-line.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace braid::run {

class LineBuffer {
 public:
  // Each emitted line excludes its '\n'. A line longer than maxLine is emitted
  // in maxLine pieces, so a rank that never prints a newline cannot make
  // braid-run grow without bound.
  using Emit = std::function<void(std::string_view line)>;
  explicit LineBuffer(size_t maxLine = 64 * 1024) : maxLine_(maxLine) {}

  // Appends bytes, emitting every line completed by them.
  void append(std::string_view data, const Emit& emit);
  // End of stream: emits the unterminated tail, if any, as a line.
  void finish(const Emit& emit);

 private:
  size_t maxLine_;
  std::string pending_;
};

}  // namespace braid::run
