// Regression mode of the fuzz targets: every file of tests/fuzz/corpus/<target>/
// is fed to that target's entry, as libFuzzer would. A property violation
// aborts the binary naming the file (fuzz_target.h); an ASan/UBSan build of
// this test catches memory errors on the corpus too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.h"

namespace {

namespace fs = std::filesystem;

void replay(const char* target, int (*entry)(const uint8_t*, size_t)) {
  fs::path dir = fs::path(BRAID_FUZZ_CORPUS_DIR) / target;
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing: every fuzz target needs a seed corpus";
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << dir << " holds no inputs";
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(in.bad()) << "cannot read " << file;
    std::string name = file.string();
    braid::fuzz::currentInput() = name.c_str();
    EXPECT_EQ(entry(bytes.data(), bytes.size()), 0) << file;
    braid::fuzz::currentInput() = "";
  }
}

#define BRAID_FUZZ_REPLAY_TEST(name) \
  TEST(FuzzCorpus, name) { replay(#name, &braidFuzz_##name); }
BRAID_FUZZ_TARGETS(BRAID_FUZZ_REPLAY_TEST)

}  // namespace
