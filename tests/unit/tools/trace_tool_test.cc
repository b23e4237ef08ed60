// The braid-trace binary end to end: its text is the library's rendering of
// the same dumps, --json parses, and an unreadable dump exits 1 naming it.
// Also the words the paragraph is built from.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include "analyze.h"
#include "load.h"
#include "render_text.h"
#include "trace_dumps.h"
#include "words.h"

namespace braid::trace {
namespace {

using testing::completedAllReduces;
using testing::FakeOp;
using testing::FakeRank;
using testing::TempDir;

struct Result {
  int exitCode = -1;
  std::string out;
};

Result run(const std::string& args) {
  Result r;
  FILE* p = popen((std::string(BRAID_TRACE_PATH) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void writeHang(const TempDir& dir) {
  for (int rank = 0; rank < 3; ++rank) {
    FakeRank r{rank, 3, "node1", 0, 900'000'000, completedAllReduces(1, 4, 0)};
    if (rank != 1) r.ops.push_back(FakeOp{"allreduce", 5, "started", 50'000'000, 0, ""});
    dir.write(r);
  }
}

TEST(BraidTraceTool, TextIsTheLibrarysRendering) {
  TempDir dir;
  writeHang(dir);
  Result r = run(dir.path());
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_EQ(r.out, renderText(analyze(loadDumps({dir.path()}).dumps)));
  EXPECT_NE(r.out.find("Rank 1 is missing from allreduce #5: it last completed allreduce #4."),
            std::string::npos)
      << r.out;
}

TEST(BraidTraceTool, JsonParses) {
  TempDir dir;
  writeHang(dir);
  Result r = run("--json " + dir.path());
  ASSERT_EQ(r.exitCode, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["nranks"], 3);
  EXPECT_EQ(j["missing"][0]["rank"], 1);
  EXPECT_EQ(j["ranks"][0]["in"]["label"], "allreduce #5");
}

TEST(BraidTraceTool, GarbageExitsOneNamingTheFile) {
  TempDir dir;
  writeHang(dir);
  const std::string bad = dir.write("zz.json",
                                    "\x7f"
                                    "ELF\x01\x02 garbage");
  Result r = run(dir.path());
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "braid-trace: " + bad + ": not a braid-trace dump (not valid JSON)\n");
  EXPECT_NE(run("").exitCode, 0) << "no dumps named is a usage error";
}

TEST(BraidTraceWords, RankListsAndDurations) {
  EXPECT_EQ(rankList({3}), "rank 3");
  EXPECT_EQ(rankList({0, 1}), "ranks 0, 1");
  EXPECT_EQ(rankList({0, 1, 2, 4, 6, 7, 8, 9}), "ranks 0-2, 4, 6-9");
  EXPECT_EQ(duration(800), "800 ns");
  EXPECT_EQ(duration(12'500), "12.5 us");
  EXPECT_EQ(duration(3'140'000), "3.1 ms");
  EXPECT_EQ(duration(12e9), "12.0 s");
  EXPECT_EQ(joinAnd({"a", "b", "c"}), "a, b and c");
  EXPECT_EQ(ordinal(1), "1st");
  EXPECT_EQ(ordinal(12), "12th");
  EXPECT_EQ(ordinal(1842), "1842nd");
  EXPECT_EQ(ordinal(103), "103rd");
  EXPECT_EQ(printable("a\x1b[2Jb\n"), "a?[2Jb\n");
  EXPECT_EQ(sentence("rank 1"), "Rank 1");
}

}  // namespace
}  // namespace braid::trace
