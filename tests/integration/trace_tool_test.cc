// braid-trace on dumps written by real ranks: one rank an op behind the
// others (dumped through braidCommDumpTrace), and ranks calling different
// collectives (dumped by braid itself into BRAID_TRACE_DIR on the failure).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "analyze.h"
#include "harness.h"
#include "load.h"
#include "render_text.h"

namespace braid::itest {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Dumps until the dump shows an op in progress, so the dump is taken inside
// the op rather than before its stream started it.
bool dumpOnceStarted(braidComm_t comm, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (braidCommDumpTrace(comm, path.c_str()) != braidSuccess) return false;
    if (readFile(path).find("\"state\":\"started\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::string freshDir() {
  char tmpl[] = "/tmp/braid-trace-tool-XXXXXX";
  const char* made = mkdtemp(tmpl);
  return made ? made : "";
}

// Three ranks run three all-reduces; ranks 0 and 1 enter a fourth (on a
// stream, so they can dump while inside it) and rank 2 dumps before joining
// it. Rank 2 then joins, so the run ends cleanly instead of by timeout.
TEST(TraceTool, NamesTheRankThatNeverReachedTheOp) {
  const std::string dir = freshDir();
  ASSERT_FALSE(dir.empty());
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 30;
  o.sharedBytes = 64;
  runRanks(o, [dir](RankContext& ctx) {
    auto* dumped = static_cast<std::atomic<int>*>(ctx.shared);
    float v[16] = {1};
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(braidAllReduce(v, v, 16, braidFloat32, braidSum, ctx.comm, nullptr), braidSuccess);
    const std::string path = dir + "/rank" + std::to_string(ctx.rank) + ".json";
    if (ctx.rank == 2) {
      ASSERT_EQ(braidCommDumpTrace(ctx.comm, path.c_str()), braidSuccess);
      dumped->fetch_add(1);
      // The harness's outer limit bounds this wait if a peer never dumps.
      while (dumped->load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_EQ(braidAllReduce(v, v, 16, braidFloat32, braidSum, ctx.comm, nullptr), braidSuccess);
      return;
    }
    braidStream_t stream = nullptr;
    ASSERT_EQ(braidStreamCreate(&stream), braidSuccess);
    ASSERT_EQ(braidAllReduce(v, v, 16, braidFloat32, braidSum, ctx.comm, stream), braidSuccess);
    EXPECT_TRUE(dumpOnceStarted(ctx.comm, path)) << "all-reduce #4 never showed as started";
    dumped->fetch_add(1);
    EXPECT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(ctx.comm);
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  });

  trace::Loaded loaded = trace::loadDumps({dir});
  ASSERT_EQ(loaded.error, "");
  ASSERT_EQ(loaded.dumps.size(), 3u);
  const trace::Report report = trace::analyze(loaded.dumps);
  const std::string text = trace::summary(report);
  EXPECT_NE(text.find("Ranks 0, 1 are in allreduce #4 (for up to "), std::string::npos) << text;
  EXPECT_NE(text.find("Rank 2 is missing from allreduce #4: it last completed allreduce #3."),
            std::string::npos)
      << text;
  ASSERT_EQ(report.missing.size(), 1u) << text;
  EXPECT_EQ(report.missing[0].rank, 2);
  // What the tool printed, for whoever reads the test log.
  std::printf("%s", trace::renderText(report).c_str());
  std::filesystem::remove_all(dir);
}

TEST(TraceTool, SaysWhereRanksCalledDifferentCollectives) {
  const std::string dir = freshDir();
  ASSERT_FALSE(dir.empty());
  setenv("BRAID_TRACE_DIR", dir.c_str(), 1);  // inherited by the forked ranks
  RunOptions o;
  o.nranks = 2;
  o.limitSeconds = 30;
  o.braidTimeoutMs = 5000;
  runRanks(o, [](RankContext& ctx) {
    float in[8] = {0}, out[16] = {0};
    braidResult_t r = ctx.rank == 0 ? braidAllReduce(in, out, 8, braidFloat32, braidSum, ctx.comm, nullptr)
                                    : braidAllGather(in, out, 8, braidFloat32, ctx.comm, nullptr);
    EXPECT_EQ(r, braidRemoteError) << braidGetLastError(ctx.comm);
  });
  unsetenv("BRAID_TRACE_DIR");

  trace::Loaded loaded = trace::loadDumps({dir});
  ASSERT_EQ(loaded.error, "");
  const trace::Report report = trace::analyze(loaded.dumps);
  const std::string text = trace::summary(report);
  EXPECT_NE(
      text.find("Ranks called different collectives as their 1st op on the communicator: allreduce #1 on "
                "rank 0 and allgather #1 on rank 1."),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("Rank 0 failed in allreduce #1: "), std::string::npos) << text;
  EXPECT_NE(text.find("Rank 1 failed in allgather #1: "), std::string::npos) << text;
  std::printf("%s", trace::renderText(report).c_str());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace braid::itest
