#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "options.h"

namespace braid::run {
namespace {

std::optional<Options> parse(std::vector<const char*> args, int* code) {
  args.insert(args.begin(), "braid-run");
  *code = -1;
  return parseOptions(static_cast<int>(args.size()), args.data(), code);
}

TEST(RunOptions, CommandStartsAtTheFirstWordThatIsNotOurs) {
  int code;
  std::optional<Options> o = parse({"-n", "4", "--timeout", "2.5", "prog", "-n", "3", "--x"}, &code);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->nranks, 4);
  EXPECT_DOUBLE_EQ(o->timeoutSec, 2.5);
  EXPECT_TRUE(o->prefix);
  EXPECT_FALSE(o->quietRanks);
  EXPECT_EQ(o->addr, "127.0.0.1");
  EXPECT_EQ(o->command, (std::vector<std::string>{"prog", "-n", "3", "--x"}));
}

TEST(RunOptions, DoubleDashEndsOurOptions) {
  int code;
  std::optional<Options> o =
      parse({"-n", "2", "--no-prefix", "--quiet-ranks", "--addr", "::1", "--", "--weird", "a"}, &code);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->prefix);
  EXPECT_TRUE(o->quietRanks);
  EXPECT_EQ(o->addr, "::1");
  EXPECT_EQ(o->command, (std::vector<std::string>{"--weird", "a"}));
}

TEST(RunOptions, RejectsUsageErrors) {
  int code;
  EXPECT_FALSE(parse({"prog"}, &code));  // -n missing
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"-n", "2"}, &code));  // no program
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"-n", "2", "--bogus", "prog"}, &code));  // a typo, not a program
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(parse({"-n", "0", "prog"}, &code));
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"-n", "2", "--timeout", "-1", "prog"}, &code));
  EXPECT_NE(code, 0);
  EXPECT_FALSE(parse({"-n", "2", "--bind-to", "socket", "prog"}, &code));  // core or none only
  EXPECT_NE(code, 0);
}

TEST(RunOptions, BindToCoreIsOptIn) {
  int code;
  std::optional<Options> o = parse({"-n", "2", "prog"}, &code);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->bindToCore);
  o = parse({"-n", "2", "--bind-to", "core", "prog"}, &code);
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->bindToCore);
  o = parse({"-n", "2", "--bind-to", "none", "prog"}, &code);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->bindToCore);
}

}  // namespace
}  // namespace braid::run
