// fabric end to end: real namespaces, veths and qdiscs. Needs root; skipped
// otherwise. Every test uses its own fabric name, removes it before and after
// (ctest's fabric_cleanup fixture removes them again if a test was killed),
// and checks that the root namespace's links and qdiscs are exactly as before
// (netns_fixture.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include "netns_fixture.h"

namespace braid::fabric::test {
namespace {

// The Gbit/s figure of "link: X Gbit/s measured, ..."; -1 when absent.
double measuredGbit(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("link: ([0-9.]+) Gbit/s measured"))) return -1;
  return std::stod(m[1]);
}

TEST_F(FabricNetns, UpBuildsShapedLinksAndDownRemovesEverything) {
  Outcome up = fabric({"up", "--name", name_, "--hosts", "3", "--rate", "200mbit"});
  ASSERT_EQ(up.exitCode, 0) << up.err;
  EXPECT_EQ(namespacesOf(name_).size(), 4u);
  EXPECT_EQ(rootNetwork(), rootBefore_) << "up touched the root namespace";
  for (int i = 0; i < 3; ++i) {
    const std::string ns = name_ + "-host" + std::to_string(i);
    Outcome addr = run({"/usr/sbin/ip", "-n", ns, "-o", "addr", "show", "dev", "fab0"});
    EXPECT_NE(addr.out.find(std::string("10.77.0.").append(std::to_string(i + 1)).append("/24")),
              std::string::npos)
        << addr.out;
    EXPECT_NE(run({"/usr/sbin/ip", "-n", ns, "link", "show", "lo"}).out.find(",UP"), std::string::npos);
    Outcome hostQ = run({"/usr/sbin/tc", "-n", ns, "qdisc", "show", "dev", "fab0"});
    EXPECT_NE(hostQ.out.find("tbf"), std::string::npos) << hostQ.out;
    EXPECT_NE(hostQ.out.find("rate 200Mbit"), std::string::npos) << hostQ.out;
    Outcome bridgeQ = run({"/usr/sbin/tc", "-n", name_ + "-br", "qdisc", "show", "dev",
                           std::string("p").append(std::to_string(i))});
    EXPECT_NE(bridgeQ.out.find("rate 200Mbit"), std::string::npos) << bridgeQ.out;
  }
  Outcome down = fabric({"down", "--name", name_});
  EXPECT_EQ(down.exitCode, 0) << down.err;
  EXPECT_TRUE(namespacesOf(name_).empty());
  EXPECT_EQ(fabric({"down", "--name", name_}).exitCode, 0) << "down is idempotent";
}

TEST_F(FabricNetns, SecondUpReplacesTheFirst) {
  ASSERT_EQ(fabric({"up", "--name", name_, "--hosts", "3", "--rate", "1gbit"}).exitCode, 0);
  Outcome again = fabric({"up", "--name", name_, "--hosts", "2", "--rate", "1gbit"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(namespacesOf(name_).size(), 3u);
}

TEST_F(FabricNetns, RanksGetTheirHostAndEnvironment) {
  Outcome r = run(runArgs(2, "1gbit",
                          {"/bin/sh", "-c",
                           "echo env $BRAID_RANK $BRAID_WORLD_SIZE $BRAID_ROOT_ADDR $BRAID_SOCKET_IFNAME "
                           "$BRAID_HOSTID $LOCAL_RANK $LOCAL_WORLD_SIZE $BRAID_SECRET $BRAID_LINK_BETA_GBPS; "
                           "ip -o -4 addr show dev fab0"},
                          {"-P", "2", "--measure", "0"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string host1 = name_ + "-host1";
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\[3\\] env 3 4 10\\.77\\.0\\.1:[0-9]+ =fab0 " + host1 +
                                                  " 1 2 [0-9a-f]{32} 0\\.1250\\n")))
      << r.out << "(unmeasured, the tuner is told the configured 1 Gbit/s: 0.1250 GB/s)";
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\[3\\] .*10\\.77\\.0\\.2/24"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\[0\\] .*10\\.77\\.0\\.1/24"))) << r.out;
  EXPECT_TRUE(namespacesOf(name_).empty()) << "run tears down its fabric";
}

TEST_F(FabricNetns, FailingRankStopsTheOthersAndTearsDown) {
  Outcome r = run(runArgs(2, "1gbit", {"/bin/sh", "-c", "[ $BRAID_RANK = 1 ] && exit 3; exec sleep 30"},
                          {"--measure", "0", "--grace", "1"}));
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_TRUE(namespacesOf(name_).empty());
}

TEST_F(FabricNetns, SigtermTearsDown) {
  Child c(runArgs(2, "1gbit", {"/bin/sh", "-c", "echo ready; exec sleep 30"}, {"--measure", "0"}));
  ASSERT_TRUE(c.waitForOut("ready", 2, 15)) << c.out();
  EXPECT_EQ(namespacesOf(name_).size(), 3u);
  kill(c.pid(), SIGTERM);
  Outcome r = c.finish(15);
  EXPECT_EQ(r.exitCode, 128 + SIGTERM) << r.err;
  EXPECT_TRUE(namespacesOf(name_).empty());
}

bool processGone(long pid) {
  std::ifstream stat(std::string("/proc/").append(std::to_string(pid)).append("/stat"));
  std::string text;
  if (!std::getline(stat, text)) return true;
  const size_t close = text.rfind(')');
  return close != std::string::npos && text.size() > close + 2 && text[close + 2] == 'Z';
}

TEST_F(FabricNetns, NextRunCleansUpAfterASigkilledRunner) {
  Child c(runArgs(2, "1gbit", {"/bin/sh", "-c", "echo ready $$; exec sleep 30"}, {"--measure", "0"}));
  ASSERT_TRUE(c.waitForOut("ready", 2, 15)) << c.out();
  std::vector<long> rankPids;
  std::smatch m;
  for (std::string out = c.out(); std::regex_search(out, m, std::regex("ready ([0-9]+)")); out = m.suffix())
    rankPids.push_back(std::stol(m[1]));
  ASSERT_EQ(rankPids.size(), 2u);
  kill(c.pid(), SIGKILL);
  c.finish(5);
  EXPECT_EQ(namespacesOf(name_).size(), 3u) << "a SIGKILLed runner cannot clean up after itself";

  Outcome next = run(runArgs(2, "1gbit", {"/bin/true"}, {"--measure", "0"}));
  EXPECT_EQ(next.exitCode, 0) << next.err;
  EXPECT_NE(next.err.find("stale"), std::string::npos) << next.err;
  EXPECT_TRUE(namespacesOf(name_).empty());
  // The ranks died with their runner (or were killed by the cleanup); allow
  // the kernel a bounded moment to finish them off.
  for (long pid : rankPids) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!processGone(pid) && std::chrono::steady_clock::now() < end) std::this_thread::yield();
    EXPECT_TRUE(processGone(pid)) << "rank process " << pid << " outlived the fabric";
  }
}

TEST_F(FabricNetns, ShapingLimitsThroughputBothWays) {
  ASSERT_EQ(fabric({"up", "--name", name_, "--hosts", "2", "--rate", "200mbit"}).exitCode, 0);
  for (auto [from, to] : {std::pair{"0", "1"}, std::pair{"1", "0"}}) {
    Outcome m = fabric({"measure", "--name", name_, "--from", from, "--to", to, "--seconds", "1.5"});
    ASSERT_EQ(m.exitCode, 0) << m.err;
    const double gbit = measuredGbit(m.out);
    EXPECT_GE(gbit, 0.7 * 0.2) << m.out;
    EXPECT_LE(gbit, 1.05 * 0.2) << m.out;
  }
}

// A TCP connect from host `from` to host `to`'s port 9 (nobody listens): "refused"
// when the RST comes back, "silent" when nothing does within a second.
std::string probe(const std::string& fabricName, int from, int to) {
  Outcome r =
      run({"/usr/sbin/ip", "netns", "exec", fabricName + "-host" + std::to_string(from), "/usr/bin/timeout",
           "1", "/usr/bin/bash", "-c", "echo > /dev/tcp/10.77.0." + std::to_string(to + 1) + "/9"},
          5);
  if (r.exitCode == 124) return "silent";
  return r.err.find("refused") != std::string::npos ? "refused" : "other: " + r.err;
}

TEST_F(FabricNetns, LinkDownCutsAHostSilentlyAndUpRestoresIt) {
  ASSERT_EQ(fabric({"up", "--name", name_, "--hosts", "3", "--rate", "1gbit"}).exitCode, 0);
  ASSERT_EQ(probe(name_, 0, 1), "refused");
  Outcome down = fabric({"link", "--name", name_, "--host", "1", "down"});
  ASSERT_EQ(down.exitCode, 0) << down.err;
  EXPECT_NE(down.out.find("host1's link is down"), std::string::npos) << down.out;
  // Cut at the switch: the host keeps its address but loses its carrier, and
  // nothing answers in either direction; the other hosts still reach each other.
  Outcome hostSide = run({"/usr/sbin/ip", "-n", name_ + "-host1", "link", "show", "fab0"});
  EXPECT_NE(hostSide.out.find("NO-CARRIER"), std::string::npos) << hostSide.out;
  EXPECT_EQ(probe(name_, 0, 1), "silent");
  EXPECT_EQ(probe(name_, 1, 0), "silent");
  EXPECT_EQ(probe(name_, 2, 0), "refused");
  EXPECT_EQ(fabric({"link", "--name", name_, "--host", "3", "down"}).exitCode, 2) << "no such host";
  ASSERT_EQ(fabric({"link", "--name", name_, "--host", "1", "up"}).exitCode, 0);
  // The port forwards again once its carrier is back (no STP); allow a bounded moment.
  std::string after;
  for (int i = 0; i < 5 && after != "refused"; ++i) after = probe(name_, 0, 1);
  EXPECT_EQ(after, "refused");
  EXPECT_EQ(rootNetwork(), rootBefore_) << "link touched the root namespace";
}

TEST_F(FabricNetns, LinkOnAFabricThatIsNotUpFails) {
  Outcome r = fabric({"link", "--name", name_, "--host", "0", "down"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("is not up"), std::string::npos) << r.err;
}

TEST_F(FabricNetns, BraidAllReduceAcrossFourHosts) {
  Outcome r =
      run(runArgs(4, "1gbit",
                  {BRAID_PERF_PATH, "allreduce", "-b", "8", "-e", "4M", "-f", "4", "-n", "5", "-w", "1"},
                  {"--ranks-per-host", "1", "--measure", "0.5", "--timeout", "40"}),
          45);
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_GT(measuredGbit(r.out), 0.5) << r.out;
  EXPECT_NE(r.out.find("Out of bounds values : 0 OK"), std::string::npos) << r.out;
  // Every data row: ... time algbw busbw #wrong (out-of-place) time algbw busbw #wrong (in-place).
  int rows = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("[0] ", 0) != 0 || line.find('#') != std::string::npos) continue;
    std::istringstream words(line.substr(4));
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    if (w.size() != 13) continue;
    ++rows;
    EXPECT_EQ(w[8], "0") << line;
    EXPECT_EQ(w[12], "0") << line;
  }
  EXPECT_EQ(rows, 10) << r.out;  // 8 B .. 2 MiB by factors of 4
}

TEST(FabricPrivilege, RefusesWithoutRoot) {
  // As root, drop to nobody in the child; otherwise we already are unprivileged.
  Child c({kFabric, "up", "--name", "bft_noroot", "--hosts", "2", "--rate", "1gbit"},
          geteuid() == 0 ? 65534 : -1);
  Outcome r = c.finish(10);
  EXPECT_EQ(r.exitCode, 77);
  EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace braid::fabric::test
