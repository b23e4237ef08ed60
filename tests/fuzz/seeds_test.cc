// The checked-in seed corpus is what the generator makes today, and the
// checksum repairs the targets rely on still match the library's encoders.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/bootstrap/unique_id.h"
#include "fixups.h"
#include "seeds.h"

namespace {

namespace fs = std::filesystem;

TEST(FuzzSeeds, CheckedInCorpusMatchesGenerator) {
  std::vector<braid::fuzz::Seed> seeds = braid::fuzz::generateSeeds();
  ASSERT_FALSE(seeds.empty());
  for (const braid::fuzz::Seed& seed : seeds) {
    fs::path file = fs::path(BRAID_FUZZ_CORPUS_DIR) / seed.target / seed.name;
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(in.good()) << file << " is missing: run seed_gen tests/fuzz/corpus and commit the result";
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes, seed.bytes) << file << " is stale: run seed_gen tests/fuzz/corpus and commit the result";
  }
}

TEST(FuzzSeeds, UniqueIdRepairMatchesPack) {
  braid::bootstrap::UniqueId id;
  ASSERT_TRUE(braid::net::parseAddress("192.0.2.1:7", &id.root).isOk());
  id.secret[3] = 0x5c;
  uint8_t packed[braid::bootstrap::UniqueId::kBytes], repaired[braid::bootstrap::UniqueId::kBytes];
  id.pack(packed);
  std::memcpy(repaired, packed, sizeof(packed));
  repaired[57] ^= 0xff;  // break the check, then let the fuzz repair restore it
  braid::fuzz::repairUniqueIdCheck(repaired);
  EXPECT_EQ(0, std::memcmp(packed, repaired, sizeof(packed)))
      << "repairUniqueIdCheck no longer matches UniqueId::pack: update the key or layout in fixups.h";
}

TEST(FuzzSeeds, FrameRepairMatchesEncode) {
  braid::tcp::FrameHeader h;
  h.tag = 3, h.total = 12345, h.partSize = 12345;
  uint8_t encoded[braid::tcp::kFrameHeaderBytes], repaired[braid::tcp::kFrameHeaderBytes];
  braid::tcp::encodeFrame(h, encoded);
  std::memcpy(repaired, encoded, sizeof(encoded));
  repaired[36] ^= 0xff;
  braid::fuzz::repairFrameCheck(repaired);
  EXPECT_EQ(0, std::memcmp(encoded, repaired, sizeof(encoded)));
}

}  // namespace
