// What every end-to-end fabric test shares: running the fabric tool, looking at
// namespaces and at the root namespace's network, and a fixture that gives
// each test its own fabric name (bft_ + the first 24 characters of the test's
// name, which CMakeLists.txt's fabric_cleanup derives as well), removes that
// fabric before and after, and checks that the root namespace's links and
// qdiscs are exactly as before. Tests skip without root.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "child.h"

namespace braid::fabric::test {

inline const std::string kFabric = FABRIC_PATH;

// Runs the fabric tool with args (bounded by timeoutSec).
Outcome fabric(std::vector<std::string> args, double timeoutSec = 20);

// This fabric's namespaces that exist now.
std::vector<std::string> namespacesOf(const std::string& name);

// What the root namespace looks like: link names and qdiscs.
std::string rootNetwork();

class FabricNetns : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // argv of `fabric run --name <ours> --hosts H --rate R <extra> -- cmd...`.
  std::vector<std::string> runArgs(int hosts, const std::string& rate, std::vector<std::string> cmd,
                                   std::vector<std::string> extra = {});

  std::string name_;
  std::string rootBefore_;
};

}  // namespace braid::fabric::test
