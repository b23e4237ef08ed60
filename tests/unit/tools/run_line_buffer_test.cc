#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "line_buffer.h"

namespace braid::run {
namespace {

struct Collect {
  std::vector<std::string> lines;
  LineBuffer::Emit emit() {
    return [this](std::string_view l) { lines.emplace_back(l); };
  }
};

TEST(LineBuffer, JoinsChunksIntoWholeLines) {
  LineBuffer buf;
  Collect c;
  buf.append("hel", c.emit());
  EXPECT_TRUE(c.lines.empty());
  buf.append("lo\nwor", c.emit());
  buf.append("ld\n\nlast", c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"hello", "world", ""}));
  buf.finish(c.emit());
  EXPECT_EQ(c.lines.back(), "last");
  buf.finish(c.emit());  // nothing pending: nothing more
  EXPECT_EQ(c.lines.size(), 4u);
}

TEST(LineBuffer, FinishWithoutTailEmitsNothing) {
  LineBuffer buf;
  Collect c;
  buf.append("a\n", c.emit());
  buf.finish(c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a"}));
}

TEST(LineBuffer, SplitsOverlongLinesAtTheLimit) {
  LineBuffer buf(4);
  Collect c;
  buf.append("abcdefghij", c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "efgh"}));
  buf.append("\n", c.emit());
  EXPECT_EQ(c.lines.back(), "ij");
  // A line of exactly the limit, newline included, is one line.
  buf.append("wxyz\n", c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "efgh", "ij", "wxyz"}));
}

TEST(LineBuffer, LimitAppliesAcrossChunks) {
  LineBuffer buf(4);
  Collect c;
  buf.append("ab", c.emit());
  buf.append("cdef\n", c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "ef"}));
}

}  // namespace
}  // namespace braid::run
