#include "netns_fixture.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

namespace braid::fabric::test {

Outcome fabric(std::vector<std::string> args, double timeoutSec) {
  args.insert(args.begin(), kFabric);
  return run(args, timeoutSec);
}

std::vector<std::string> namespacesOf(const std::string& name) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec)) {
    const std::string n = e.path().filename();
    if (n.rfind(name + "-", 0) == 0) out.push_back(n);
  }
  return out;
}

std::string rootNetwork() {
  Outcome links = run({"/usr/sbin/ip", "-o", "link", "show"});
  Outcome qdiscs = run({"/usr/sbin/tc", "qdisc", "show"});
  std::string names;
  std::istringstream in(links.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string index, name;
    words >> index >> name;
    names += name + "\n";
  }
  return names + qdiscs.out;
}

void FabricNetns::SetUp() {
  if (geteuid() != 0) GTEST_SKIP() << "fabric needs root (network namespaces, veth, tc)";
  // At most 24 characters of the test's name: fabric names stop at 32, and
  // CMakeLists.txt's fabric_cleanup derives the same names.
  name_ = "bft_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()).substr(0, 24);
  ASSERT_EQ(fabric({"down", "--name", name_}).exitCode, 0);
  rootBefore_ = rootNetwork();
}

void FabricNetns::TearDown() {
  if (geteuid() != 0) return;
  Outcome down = fabric({"down", "--name", name_});
  EXPECT_EQ(down.exitCode, 0) << down.err;
  EXPECT_TRUE(namespacesOf(name_).empty());
  EXPECT_FALSE(std::filesystem::exists("/run/braid-fabric/" + name_ + ".state"));
  EXPECT_FALSE(std::filesystem::exists("/run/braid-fabric/" + name_ + ".lock"));
  EXPECT_EQ(rootNetwork(), rootBefore_) << "the root namespace's links or qdiscs changed";
}

std::vector<std::string> FabricNetns::runArgs(int hosts, const std::string& rate,
                                              std::vector<std::string> cmd, std::vector<std::string> extra) {
  std::vector<std::string> a = {kFabric,  "run", "--name", name_, "--hosts", std::to_string(hosts),
                                "--rate", rate};
  a.insert(a.end(), extra.begin(), extra.end());
  a.push_back("--");
  a.insert(a.end(), cmd.begin(), cmd.end());
  return a;
}

}  // namespace braid::fabric::test
