// fabric's pure parts: rates and sizes, names, the build plan, the state file.
#include <gtest/gtest.h>

#include <algorithm>

#include "options.h"
#include "rate.h"
#include "state.h"
#include "topology.h"

namespace braid::fabric {
namespace {

TEST(FabricRate, ParsesTcRates) {
  EXPECT_EQ(parseRate("1gbit"), 1000000000u);
  EXPECT_EQ(parseRate("200mbit"), 200000000u);
  EXPECT_EQ(parseRate("2.5Gbit"), 2500000000u);
  EXPECT_EQ(parseRate("125mbps"), 1000000000u);  // tc: bps is bytes per second
  EXPECT_EQ(parseRate("64kbit"), 64000u);
}

TEST(FabricRate, RejectsMalformedRates) {
  for (const char* bad :
       {"", "gbit", "1", "1gb", "-1gbit", "0mbit", "1 gbit", "1kbit", "nanbit", "1e20gbit"}) {
    EXPECT_FALSE(parseRate(bad).has_value()) << bad;
  }
}

TEST(FabricRate, ParsesSizes) {
  EXPECT_EQ(parseSize("625kb"), 625u * 1024);
  EXPECT_EQ(parseSize("1m"), 1024u * 1024);
  EXPECT_EQ(parseSize("1500"), 1500u);
  EXPECT_FALSE(parseSize("1kbit").has_value());
  EXPECT_FALSE(parseSize("0").has_value());
}

TEST(FabricRate, DefaultBurstIsFourMillisecondsAndAtLeast64KiB) {
  EXPECT_EQ(defaultBurstBytes(1000000000), 500000u);
  EXPECT_EQ(defaultBurstBytes(10000000), 64u * 1024);
}

TEST(FabricRate, Formats) {
  EXPECT_EQ(formatRate(1e9), "1 Gbit/s");
  EXPECT_EQ(formatRate(2e8), "200 Mbit/s");
  EXPECT_EQ(formatRate(1.5e9), "1.5 Gbit/s");
}

TEST(FabricTopology, NamesAndOwnership) {
  EXPECT_EQ(hostNamespace("braidfab", 3), "braidfab-host3");
  EXPECT_EQ(bridgeNamespace("braidfab"), "braidfab-br");
  EXPECT_EQ(hostAddress(0), "10.77.0.1");
  EXPECT_TRUE(ownsNamespace("f", "f-host12"));
  EXPECT_TRUE(ownsNamespace("f", "f-br"));
  EXPECT_FALSE(ownsNamespace("f", "f-host"));
  EXPECT_FALSE(ownsNamespace("f", "f-hostx"));
  EXPECT_FALSE(ownsNamespace("f", "g-host0"));
  EXPECT_FALSE(ownsNamespace("f", "ff-host0"));
  EXPECT_TRUE(validFabricName("braid_fab2"));
  EXPECT_FALSE(validFabricName("a-b"));
  EXPECT_FALSE(validFabricName(""));
  EXPECT_FALSE(validFabricName("../x"));
}

TEST(FabricTopology, PlanStaysInsideItsNamespacesAndShapesBothEnds) {
  FabricSpec spec;
  spec.name = "t";
  spec.hosts = 2;
  spec.rateBits = 200000000;
  spec.burstBytes = 100000;
  const auto cmds = buildCommands(spec);
  ASSERT_FALSE(cmds.empty());
  int tbfs = 0;
  for (const auto& c : cmds) {
    const bool addNs = c.size() == 4 && c[1] == "netns" && c[2] == "add";
    // Everything but creating the namespaces names one with -n: nothing runs
    // in the root namespace.
    EXPECT_TRUE(addNs || (c.size() > 2 && c[1] == "-n" && ownsNamespace("t", c[2]))) << c[0] << " " << c[1];
    if (std::find(c.begin(), c.end(), "tbf") != c.end()) {
      ++tbfs;
      EXPECT_NE(std::find(c.begin(), c.end(), "200000000bit"), c.end());
      EXPECT_NE(std::find(c.begin(), c.end(), "100000"), c.end());
    }
  }
  EXPECT_EQ(tbfs, 4);  // two veths, both ends
  EXPECT_EQ(cmds[0], (std::vector<std::string>{"ip", "netns", "add", "t-br"}));
}

TEST(FabricTopology, LinkCutIsTheSwitchPortInsideTheBridgeNamespace) {
  EXPECT_EQ(linkCommand("t", 2, false),
            (std::vector<std::string>{"ip", "-n", "t-br", "link", "set", "p2", "down"}));
  EXPECT_EQ(linkCommand("t", 0, true),
            (std::vector<std::string>{"ip", "-n", "t-br", "link", "set", "p0", "up"}));
}

TEST(FabricOptions, LinkVerb) {
  int exitCode = -1;
  const char* down[] = {"fabric", "link", "--name", "f", "--host", "2", "down"};
  std::optional<Options> o = parseOptions(7, down, &exitCode);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->verb, Verb::kLink);
  EXPECT_EQ(o->spec.name, "f");
  EXPECT_EQ(o->host, 2);
  EXPECT_FALSE(o->linkUp);
  const char* up[] = {"fabric", "link", "--host", "0", "up"};
  o = parseOptions(5, up, &exitCode);
  ASSERT_TRUE(o.has_value());
  EXPECT_TRUE(o->linkUp);
  EXPECT_EQ(o->host, 0);
  // CLI11 prints the usage error to stderr; only the outcome matters here.
  const char* sideways[] = {"fabric", "link", "--host", "1", "sideways"};
  EXPECT_FALSE(parseOptions(5, sideways, &exitCode).has_value());
  EXPECT_NE(exitCode, 0);
  const char* noHost[] = {"fabric", "link", "down"};
  EXPECT_FALSE(parseOptions(3, noHost, &exitCode).has_value());
}

TEST(FabricState, RoundTrips) {
  FabricState s;
  s.spec.name = "fab";
  s.spec.hosts = 4;
  s.spec.rateBits = 1000000000;
  s.spec.burstBytes = 500000;
  s.owner = "run";
  s.pid = 1234;
  std::optional<FabricState> back = parseState(formatState(s));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->spec.name, "fab");
  EXPECT_EQ(back->spec.hosts, 4);
  EXPECT_EQ(back->spec.rateBits, 1000000000u);
  EXPECT_EQ(back->spec.burstBytes, 500000u);
  EXPECT_EQ(back->owner, "run");
  EXPECT_EQ(back->pid, 1234);
  EXPECT_FALSE(parseState("name=x\nhosts=2\n").has_value());
  EXPECT_FALSE(parseState("name=x\nhosts=q\nrate_bits=1\nburst_bytes=1\nowner=up\npid=1\n").has_value());
}

}  // namespace
}  // namespace braid::fabric
