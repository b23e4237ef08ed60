// Flight recorder: every rank can say which op it is in, through
// braidCommDumpTrace and automatically when an op fails; and a rank that calls
// a different collective than its peer is caught by the wire tags.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "harness.h"

namespace braid::itest {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string freshDir() {
  char tmpl[] = "/tmp/braid-trace-test-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return dir ? dir : "";
}

TEST(FlightRecorder, DumpListsEveryOpWithItsSequenceAndState) {
  const std::string dir = freshDir();
  ASSERT_FALSE(dir.empty());
  RunOptions o;
  o.nranks = 3;
  o.limitSeconds = 30;
  runRanks(o, [dir](RankContext& ctx) {
    float v[5] = {1, 2, 3, 4, 5};
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(braidAllReduce(v, v, 5, braidFloat32, braidSum, ctx.comm, nullptr), braidSuccess);
    ASSERT_EQ(braidBroadcast(v, v, 5, braidFloat32, 2, ctx.comm, nullptr), braidSuccess);
    const std::string path = dir + "/rank" + std::to_string(ctx.rank) + ".json";
    ASSERT_EQ(braidCommDumpTrace(ctx.comm, path.c_str()), braidSuccess) << braidGetLastError(ctx.comm);
    const std::string json = readFile(path);
    EXPECT_NE(json.find("\"rank\":" + std::to_string(ctx.rank)), std::string::npos) << json;
    EXPECT_NE(json.find("\"op\":\"allreduce\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"seq\":3"), std::string::npos) << json;  // the third all-reduce
    EXPECT_NE(json.find("\"op\":\"broadcast\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"root_or_peer\":2"), std::string::npos) << json;
    EXPECT_NE(json.find("\"dtype\":\"float\""), std::string::npos) << json;
    EXPECT_EQ(json.find("\"state\":\"started\""), std::string::npos) << json;
    EXPECT_EQ(json.find("\"state\":\"failed\""), std::string::npos) << json;
    EXPECT_EQ(braidCommDumpTrace(nullptr, path.c_str()), braidInvalidArgument);
  });
  std::filesystem::remove_all(dir);
}

TEST(FlightRecorder, MismatchedCollectivesFailWithTheOpNamedAndADump) {
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
    const std::string msg = braidGetLastError(ctx.comm);
    EXPECT_NE(msg.find(ctx.rank == 0 ? "allreduce #1" : "allgather #1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("different collectives"), std::string::npos) << msg;
    braidResult_t async = braidSuccess;
    ASSERT_EQ(braidCommGetAsyncError(ctx.comm, &async), braidSuccess);
    EXPECT_EQ(async, braidRemoteError);
    // Later calls fail at once with the first error instead of hanging.
    EXPECT_EQ(braidBarrier(ctx.comm, nullptr), braidRemoteError);
  });
  unsetenv("BRAID_TRACE_DIR");
  int dumps = 0;
  for (int rank = 0; rank < 2; ++rank) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    // The file name carries the pid, which only the child knew: look for any dump of this rank.
    std::string cmd = "ls " + dir + " | grep -c 'rank" + std::to_string(rank) + ".json$'";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    int n = 0;
    if (fscanf(p, "%d", &n) != 1) n = 0;
    pclose(p);
    dumps += n;
  }
  EXPECT_EQ(dumps, 2) << "each failing rank writes its flight recorder into BRAID_TRACE_DIR";
  std::string all;
  FILE* p = popen(("cat " + dir + "/*.json").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) all.append(buf, n);
  pclose(p);
  EXPECT_NE(all.find("\"state\":\"failed\""), std::string::npos) << all;
  EXPECT_NE(all.find("different collectives"), std::string::npos) << all;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace braid::itest
