// seed_gen DIR: writes the generated seed corpus (seeds.h) as DIR/<target>/<name>.
// Run once after a wire-format change: build/tests/fuzz/seed_gen tests/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "seeds.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  int written = 0;
  for (const braid::fuzz::Seed& seed : braid::fuzz::generateSeeds()) {
    std::filesystem::path dir = std::filesystem::path(argv[1]) / seed.target;
    std::filesystem::create_directories(dir);
    std::ofstream out(dir / seed.name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(seed.bytes.data()), static_cast<std::streamsize>(seed.bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir / seed.name).c_str());
      return 1;
    }
    ++written;
  }
  std::printf("wrote %d seeds under %s\n", written, argv[1]);
  return 0;
}
