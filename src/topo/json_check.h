// Strict reading of nlohmann::json values for the topology file and the rank
// views: every accessor names the place it reads ("hosts[0].nics[2].numa") so
// the error a user sees says exactly what to fix. Failures throw JsonError,
// which never leaves topo/: the entry points catch it and return
// InvalidArgument.
#pragma once

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "topo/cpulist.h"

namespace braid::topo::detail {

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr size_t kMaxArrayItems = 1 << 16;
constexpr size_t kMaxStringBytes = 255;
// A CPU list may be long where CPUs are scattered ("0,2,4,...": a rank given
// every other CPU of a big host), bounded by kMaxCpu's ids.
constexpr size_t kMaxCpuListBytes = 256 * 1024;
constexpr int kMaxJsonDepth = 16;

// Parses text, refusing nesting deeper than kMaxJsonDepth. Throws JsonError.
nlohmann::json parseJson(const std::string& text);

// One JSON object being read; finish() refuses keys nobody asked for.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& j, std::string where);

  std::string str(const char* key, bool required, const std::string& dflt = "");
  int64_t integer(const char* key, bool required, int64_t min, int64_t max, int64_t dflt = 0);
  double number(const char* key, bool required, double min, double max, double dflt = 0);
  bool boolean(const char* key, bool required, bool dflt);
  uint32_t hex(const char* key, uint32_t max);  // "0x1234", optional (0)
  CpuList cpus(const char* key, bool required);
  // An array (optional: empty when absent), at most kMaxArrayItems.
  const nlohmann::json& array(const char* key, bool required);
  void finish();

  std::string at(const char* key) const { return where_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& why) const;

 private:
  const nlohmann::json* find(const char* key, bool required);
  std::string text(const char* key, bool required, const std::string& dflt, size_t maxBytes);

  const nlohmann::json& j_;
  std::string where_;
  std::set<std::string> seen_;
};

}  // namespace braid::topo::detail
