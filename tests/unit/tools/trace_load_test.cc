// braid-trace's loading: garbage and malformed dumps are errors that name the
// file and the field, dumps that do not belong together are refused, and a
// directory contributes its *.json files only.
#include <gtest/gtest.h>

#include "load.h"
#include "parse.h"
#include "trace_dumps.h"

namespace braid::trace {
namespace {

using testing::completedAllReduces;
using testing::FakeRank;
using testing::TempDir;

std::string loadError(const std::vector<std::string>& paths) { return loadDumps(paths).error; }

// The dump of a rank with one field replaced, as text.
std::string withField(const std::string& pointer, const nlohmann::json& value) {
  nlohmann::json j = FakeRank{0, 2, "node1", 0, 5, completedAllReduces(1, 2, 1)}.json();
  j[nlohmann::json::json_pointer(pointer)] = value;
  return j.dump();
}

std::string parseError(const std::string& text) {
  Dump d;
  return parseDump(text, "r.json", &d);
}

TEST(BraidTraceLoad, GarbageIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string good = dir.write(FakeRank{0, 2, "node1", 0, 5, completedAllReduces(1, 2, 1)});
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 7919) % 256);
  const std::string bad = dir.write("rank1.json", junk);
  EXPECT_EQ(loadError({good, bad}), bad + ": not a braid-trace dump (not valid JSON)");
  EXPECT_EQ(loadError({dir.path()}), bad + ": not a braid-trace dump (not valid JSON)");
  EXPECT_EQ(parseError(""), "r.json: not a braid-trace dump (not valid JSON)");
  EXPECT_EQ(parseError("{\"rank\":0,"), "r.json: not a braid-trace dump (not valid JSON)");
  EXPECT_EQ(parseError("[1,2]"), "r.json: not a braid-trace dump (expected a JSON object)");
}

TEST(BraidTraceLoad, MalformedFieldsAreNamed) {
  EXPECT_EQ(parseError(withField("/ops/1/state", "sleeping")),
            "r.json: ops[1].state: expected enqueued, started, completed or failed, got \"sleeping\"");
  EXPECT_EQ(parseError(withField("/ops/0/seq", -1)),
            "r.json: ops[0].seq: expected a non-negative integer, got -1");
  EXPECT_EQ(parseError(withField("/ops/0/started_ns", 1.5)),
            "r.json: ops[0].started_ns: expected a non-negative integer, got 1.5");
  EXPECT_EQ(parseError(withField("/ops/0/op", 7)), "r.json: ops[0].op: expected a string, got 7");
  EXPECT_EQ(parseError(withField("/ops/0/error", nullptr)),
            "r.json: ops[0].error: expected a string, got null");
  EXPECT_EQ(parseError(withField("/ops/0", "x")), "r.json: ops[0]: expected an object");
  EXPECT_EQ(parseError(withField("/ops", "none")), "r.json: ops: expected an array, got \"none\"");
  EXPECT_EQ(parseError(withField("/rank", 2)), "r.json: rank 2 is not below nranks 2");
  EXPECT_EQ(parseError(withField("/nranks", 0)), "r.json: nranks: 0 is out of range");
  EXPECT_EQ(parseError(withField("/host", false)), "r.json: host: expected a string, got false");
  nlohmann::json noOps = nlohmann::json::parse(withField("/rank", 0));
  noOps.erase("ops");
  EXPECT_EQ(parseError(noOps.dump()), "r.json: ops: missing");
  Dump d;
  EXPECT_EQ(parseDump(withField("/extra_field", 1), "r.json", &d), "") << "unknown fields are allowed";
  EXPECT_EQ(d.ops.size(), 2u);
  EXPECT_EQ(d.ops[1].seq, 2u);
}

TEST(BraidTraceLoad, DumpsThatDoNotBelongTogetherAreRefused) {
  TempDir a, b;
  const std::string first = a.write(FakeRank{1, 4, "node1", 0, 5, {}});
  const std::string again = b.write(FakeRank{1, 4, "node1", 0, 5, {}});
  EXPECT_EQ(loadError({first, again}), again + ": a second dump of rank 1 (the first is " + first +
                                           "; dumps of different runs? pass the files of one run)");
  const std::string other = b.write("other.json", FakeRank{0, 8, "node1", 0, 5, {}}.json().dump());
  EXPECT_EQ(loadError({first, other}),
            first + ": nranks 4 but " + other + " says 8 (dumps of different communicators?)");
}

TEST(BraidTraceLoad, DirectoriesAndPaths) {
  TempDir dir;
  EXPECT_EQ(loadError({dir.path()}), dir.path() + ": no *.json dumps in this directory");
  EXPECT_EQ(loadError({dir.path() + "/nope"}), dir.path() + "/nope: no such file or directory");
  dir.write(FakeRank{1, 2, "node1", 0, 5, {}});
  dir.write(FakeRank{0, 2, "node1", 0, 5, {}});
  dir.write("braid-trace.node1.1000.rank0.json.tmp1000", "half a dump");  // the recorder's temp file
  dir.write("notes.txt", "not a dump");
  Loaded loaded = loadDumps({dir.path()});
  ASSERT_EQ(loaded.error, "");
  ASSERT_EQ(loaded.dumps.size(), 2u);
  EXPECT_EQ(loaded.dumps[0].rank, 0);  // sorted by rank, whatever the file order
  EXPECT_EQ(loaded.dumps[1].pid, 1001);
}

}  // namespace
}  // namespace braid::trace
