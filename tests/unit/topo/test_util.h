// Helpers for the topology tests: the checked-in machine, temporary files and
// scoped environment variables.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "topo/topo_file.h"

namespace braid::topo::testing {

inline std::string dataPath(const std::string& name) { return std::string(BRAID_TOPO_TEST_DATA) + "/" + name; }

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The 2-socket, 8-GPU, 4-NIC machine of data/dgx_like.json.
inline HostTopology dgx() {
  HostTopology h;
  Status st = loadTopologyFile(dataPath("dgx_like.json"), "any", &h);
  EXPECT_TRUE(st.isOk()) << st.message();
  return h;
}

// A directory removed (with what the test put in it) at scope end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/braid-topo-test-XXXXXX";
    path_ = mkdtemp(tmpl) ? tmpl : "/tmp";
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    size_t slash = p.find_last_of('/');
    std::system(("mkdir -p '" + p.substr(0, slash) + "'").c_str());
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::string path_;
};

// Sets (or unsets, with nullopt) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace braid::topo::testing
