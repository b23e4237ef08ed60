#include "core/bootstrap/unique_id.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/bootstrap/root.h"
#include "test_util.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

using testing::contains;

UniqueId sampleId(const char* hostPort) {
  UniqueId id;
  EXPECT_TRUE(net::parseAddress(hostPort, &id.root).isOk());
  for (size_t i = 0; i < id.secret.size(); ++i) id.secret[i] = static_cast<uint8_t>(i * 37 + 1);
  return id;
}

TEST(UniqueId, RoundTripsV4AndV6) {
  for (const char* addr : {"127.0.0.1:29500", "[::1]:1234"}) {
    UniqueId id = sampleId(addr);
    uint8_t bytes[UniqueId::kBytes];
    id.pack(bytes);
    UniqueId back;
    ASSERT_TRUE(UniqueId::unpack(bytes, &back).isOk()) << addr;
    EXPECT_EQ(back.root.toString(), id.root.toString());
    EXPECT_EQ(back.secret, id.secret);
  }
}

TEST(UniqueId, FitsThePublicStruct) {
  static_assert(UniqueId::kBytes == 128, "braidUniqueId is 128 bytes");
}

TEST(UniqueId, RejectsGarbageAndZeros) {
  uint8_t bytes[UniqueId::kBytes];
  ASSERT_TRUE(net::randomBytes(bytes, sizeof(bytes)).isOk());
  bytes[0] = 'x';  // never the magic, whatever the random draw
  UniqueId out;
  Status st = UniqueId::unpack(bytes, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "not a braid unique id")) << st.message();

  std::memset(bytes, 0, sizeof(bytes));
  st = UniqueId::unpack(bytes, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "not a braid unique id")) << st.message();
}

TEST(UniqueId, RejectsOtherVersion) {
  uint8_t bytes[UniqueId::kBytes];
  sampleId("127.0.0.1:1").pack(bytes);
  bytes[4] = 7;
  UniqueId out;
  Status st = UniqueId::unpack(bytes, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "version 7")) << st.message();
}

TEST(UniqueId, RejectsCorruption) {
  for (size_t at : {size_t{9}, size_t{45}, size_t{60}, size_t{100}}) {
    uint8_t bytes[UniqueId::kBytes];
    sampleId("127.0.0.1:1").pack(bytes);
    bytes[at] ^= 0x10;
    UniqueId out;
    Status st = UniqueId::unpack(bytes, &out);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << "byte " << at;
    EXPECT_TRUE(contains(st.message(), "corrupted")) << st.message();
  }
}

TEST(UniqueId, StartRootGivesAFreshSecretAndARealPort) {
  UniqueId a, b;
  ASSERT_TRUE(startRoot("", &a).isOk());
  ASSERT_TRUE(startRoot("", &b).isOk());
  EXPECT_NE(a.root.port(), 0);
  EXPECT_NE(a.secret, b.secret);
  EXPECT_NE(a.secret, transport::Secret{});
  stopAllRoots();
  EXPECT_EQ(runningRoots(), 0);
}

TEST(UniqueId, StartRootRejectsAnUnmatchedSelector) {
  UniqueId id;
  Status st = startRoot("=no-such-interface0", &id);
  EXPECT_FALSE(st.isOk());
  EXPECT_TRUE(contains(st.message(), "no-such-interface0")) << st.message();
}

}  // namespace
}  // namespace braid::bootstrap
