#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "net_test_util.h"
#include "transports/net/socket.h"

namespace braid::net {
namespace {

SocketAddress parsed(const std::string& text) {
  SocketAddress a;
  Status st = parseAddress(text, &a);
  EXPECT_TRUE(st.isOk()) << st.message();
  return a;
}

TEST(SocketAddress, ParsesAndPrintsIPv4) {
  SocketAddress a = parsed("10.1.2.3:4567");
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.port(), 4567);
  EXPECT_EQ(a.toString(), "10.1.2.3:4567");
  EXPECT_FALSE(a.isLoopback());
  EXPECT_TRUE(parsed("127.0.0.5:1").isLoopback());
}

TEST(SocketAddress, ParsesAndPrintsIPv6) {
  SocketAddress a = parsed("[::1]:80");
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.port(), 80);
  EXPECT_EQ(a.toString(), "[::1]:80");
  EXPECT_TRUE(a.isLoopback());
  EXPECT_EQ(parsed("[fd00::2]:65535").toString(), "[fd00::2]:65535");
}

TEST(SocketAddress, RejectsMalformedText) {
  SocketAddress a;
  for (const char* bad : {"", "1.2.3.4", "1.2.3.4:", ":80", "1.2.3.4:65536", "1.2.3.4:8x", "::1:80", "[::1]80",
                          "[::1", "no-such-host.invalid:80"}) {
    Status st = parseAddress(bad, &a);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << "'" << bad << "' was accepted";
  }
}

TEST(SocketAddress, PackUnpackRoundTrip) {
  for (const char* text : {"192.0.2.7:12345", "[::1]:9", "[2001:db8::42]:65535", "0.0.0.0:0"}) {
    SocketAddress a = parsed(text), b;
    uint8_t packed[SocketAddress::kPackedBytes];
    a.pack(packed);
    ASSERT_TRUE(SocketAddress::unpack(packed, &b).isOk()) << text;
    EXPECT_EQ(b.toString(), text);
    EXPECT_EQ(b.family(), a.family());
    EXPECT_EQ(b.length, a.length);
    EXPECT_EQ(std::memcmp(&a.storage, &b.storage, a.length), 0) << text;
  }
}

TEST(SocketAddress, UnpackRejectsGarbage) {
  uint8_t packed[SocketAddress::kPackedBytes] = {};
  SocketAddress out;
  EXPECT_EQ(SocketAddress::unpack(packed, &out).code(), Code::kInvalidArgument) << "all zero";
  packed[0] = 99;
  EXPECT_EQ(SocketAddress::unpack(packed, &out).code(), Code::kInvalidArgument) << "unknown family";
  parsed("10.0.0.1:80").pack(packed);
  packed[10] = 1;  // inside the unused IPv6 part of an IPv4 address
  EXPECT_EQ(SocketAddress::unpack(packed, &out).code(), Code::kInvalidArgument) << "v4 padding";
  parsed("[::1]:80").pack(packed);
  packed[30] = 0xff;
  EXPECT_EQ(SocketAddress::unpack(packed, &out).code(), Code::kInvalidArgument) << "tail padding";
}

TEST(Interfaces, DefaultPutsLoopbackLast) {
  std::vector<Interface> all;
  ASSERT_TRUE(findInterfaces("", AF_UNSPEC, &all).isOk());
  ASSERT_FALSE(all.empty()) << "no interface is up, not even loopback";
  bool seenLoopback = false;
  for (const Interface& itf : all) {
    EXPECT_EQ(itf.address.port(), 0);
    if (itf.loopback) seenLoopback = true;
    else EXPECT_FALSE(seenLoopback) << itf.name << " listed after loopback";
  }
}

TEST(Interfaces, PrefixExactAndExclusion) {
  std::vector<Interface> lo, exact, excluded, none;
  ASSERT_TRUE(findInterfaces("lo", AF_INET, &lo).isOk());
  ASSERT_EQ(lo.size(), 1u);
  EXPECT_EQ(lo[0].name, "lo");
  EXPECT_TRUE(lo[0].loopback);
  EXPECT_EQ(lo[0].address.toString(), "127.0.0.1:0");

  ASSERT_TRUE(findInterfaces("=l", AF_UNSPEC, &exact).isOk());
  EXPECT_TRUE(exact.empty()) << "'=l' must not match 'lo' as a prefix";

  ASSERT_TRUE(findInterfaces("^lo", AF_UNSPEC, &excluded).isOk());
  for (const Interface& itf : excluded) EXPECT_NE(itf.name.rfind("lo", 0), 0u) << itf.name;
  ASSERT_TRUE(findInterfaces("^=lo", AF_UNSPEC, &excluded).isOk());
  for (const Interface& itf : excluded) EXPECT_NE(itf.name, "lo");

  ASSERT_TRUE(findInterfaces("no-such-interface", AF_UNSPEC, &none).isOk());
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(findInterfaces("", 12345, &none).code(), Code::kInvalidArgument);
}

TEST(Interfaces, SelectorOrderIsPreference) {
  std::vector<Interface> all;
  ASSERT_TRUE(findInterfaces("", AF_INET, &all).isOk());
  if (all.size() < 2) GTEST_SKIP() << "needs two IPv4 interfaces to check the order";
  std::string first = all.back().name, second = all.front().name;
  std::vector<Interface> ordered;
  ASSERT_TRUE(findInterfaces("=" + first + "," + second, AF_INET, &ordered).isOk());
  ASSERT_EQ(ordered.size(), 2u);
  EXPECT_EQ(ordered[0].name, first);
  EXPECT_EQ(ordered[1].name, second);
}

TEST(Socket, SendRecvAllAndPeerClose) {
  Fd client, server;
  ASSERT_TRUE(testing::loopbackPair("127.0.0.1", &client, &server).isOk());
  std::vector<uint8_t> out(1 << 20), in(out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7);
  // 1 MiB exceeds the socket buffers: sendSome moves part of it, the rest flows
  // as the receiver drains, with both sides driven from this thread.
  size_t sent = 0, got = 0;
  Deadline deadline(5000);
  while (got < in.size() && !deadline.expired()) {
    ASSERT_TRUE(sendSome(client.get(), out.data() + sent, out.size() - sent, &sent).isOk());
    ASSERT_TRUE(recvSome(server.get(), in.data() + got, in.size() - got, &got).isOk());
  }
  ASSERT_EQ(got, in.size());
  EXPECT_EQ(in, out);

  uint32_t word = 0x12345678, back = 0;
  ASSERT_TRUE(sendAll(server.get(), &word, sizeof(word), Deadline(1000)).isOk());
  ASSERT_TRUE(recvAll(client.get(), &back, sizeof(back), Deadline(1000)).isOk());
  EXPECT_EQ(back, word);

  Status silent = recvAll(client.get(), &back, sizeof(back), Deadline(50));
  EXPECT_EQ(silent.code(), Code::kTimeout) << silent.message();

  server.reset();
  Status closed = recvAll(client.get(), &back, sizeof(back), Deadline(1000));
  EXPECT_EQ(closed.code(), Code::kRemoteError);
  EXPECT_NE(closed.message().find("connection closed by peer"), std::string::npos) << closed.message();
  // Writing into a closed connection fails too, without SIGPIPE killing us.
  Status st;
  for (int i = 0; i < 100 && st.isOk(); ++i) st = sendAll(client.get(), out.data(), 4096, Deadline(1000));
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
}

// The class reads back as set on either family (IPv6: its traffic class; the
// kernel keeps a TCP socket's ECN bits, so the values here have them clear);
// outside a byte it is refused and the socket keeps what it had.
TEST(Socket, TrafficClassOnBothFamilies) {
  for (const char* host : {"127.0.0.1", "::1"}) {
    Fd client, server;
    Status st = testing::loopbackPair(host, &client, &server);
    if (!st.isOk() && std::strchr(host, ':')) continue;  // no IPv6 loopback here
    ASSERT_TRUE(st.isOk()) << host << ": " << st.message();
    const bool v6 = std::strchr(host, ':') != nullptr;
    auto classOf = [v6](int fd) {
      int value = -1;
      socklen_t len = sizeof(value);
      EXPECT_EQ(v6 ? getsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &value, &len)
                   : getsockopt(fd, IPPROTO_IP, IP_TOS, &value, &len),
                0);
      return value;
    };
    EXPECT_EQ(classOf(client.get()), 0) << host;
    for (int tc : {0xb8, 0x20, 0}) {
      ASSERT_TRUE(setTrafficClass(client.get(), tc).isOk()) << host << " " << tc;
      EXPECT_EQ(classOf(client.get()), tc) << host;
    }
    ASSERT_TRUE(setTrafficClass(client.get(), 0x48).isOk());
    for (int bad : {-1, 256}) EXPECT_EQ(setTrafficClass(client.get(), bad).code(), Code::kInvalidArgument);
    EXPECT_EQ(classOf(client.get()), 0x48) << host;
  }
}

TEST(Socket, IPv6Loopback) {
  Fd client, server;
  Status st = testing::loopbackPair("::1", &client, &server);
  if (!st.isOk()) GTEST_SKIP() << "IPv6 loopback unavailable: " << st.message();
  char c = 'x', d = 0;
  ASSERT_TRUE(sendAll(client.get(), &c, 1, Deadline(1000)).isOk());
  ASSERT_TRUE(recvAll(server.get(), &d, 1, Deadline(1000)).isOk());
  EXPECT_EQ(d, 'x');
}

TEST(Socket, ConnectToNobodyTimesOut) {
  // Find a free port by listening and closing.
  Fd listener;
  SocketAddress bound;
  ASSERT_TRUE(listenOn(parsed("127.0.0.1:0"), 1, &listener, &bound).isOk());
  listener.reset();
  Fd fd;
  Status st = connectTo(bound, Deadline(100), &fd);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.message();
  EXPECT_FALSE(fd.valid());
}

TEST(Socket, AcceptOneWithNothingPending) {
  Fd listener, conn;
  SocketAddress bound;
  ASSERT_TRUE(listenOn(parsed("127.0.0.1:0"), 1, &listener, &bound).isOk());
  EXPECT_NE(bound.port(), 0);
  ASSERT_TRUE(acceptOne(listener.get(), &conn, nullptr).isOk());
  EXPECT_FALSE(conn.valid());
}

}  // namespace
}  // namespace braid::net
