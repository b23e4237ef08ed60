#include "topo/json_check.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace braid::topo::detail {

using nlohmann::json;

json parseJson(const std::string& text) {
  json::parser_callback_t depthGuard = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth)
      throw JsonError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  };
  try {
    return json::parse(text, depthGuard);
  } catch (const json::exception& e) {
    throw JsonError(std::string("not valid JSON: ") + e.what());
  }
}

ObjectReader::ObjectReader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
  if (!j_.is_object()) throw JsonError(where_ + ": expected an object, got " + j_.type_name());
}

void ObjectReader::fail(const std::string& key, const std::string& why) const {
  throw JsonError(where_ + "." + key + ": " + why);
}

const json* ObjectReader::find(const char* key, bool required) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) {
    if (required) fail(key, "missing (required)");
    return nullptr;
  }
  return &*it;
}

std::string ObjectReader::str(const char* key, bool required, const std::string& dflt) {
  return text(key, required, dflt, kMaxStringBytes);
}

std::string ObjectReader::text(const char* key, bool required, const std::string& dflt, size_t maxBytes) {
  const json* v = find(key, required);
  if (!v) return dflt;
  if (!v->is_string()) fail(key, std::string("expected a string, got ") + v->type_name());
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > maxBytes) fail(key, "longer than " + std::to_string(maxBytes) + " bytes");
  return s;
}

int64_t ObjectReader::integer(const char* key, bool required, int64_t min, int64_t max, int64_t dflt) {
  const json* v = find(key, required);
  if (!v) return dflt;
  if (!v->is_number_integer()) fail(key, std::string("expected an integer, got ") + v->type_name());
  bool inRange = v->is_number_unsigned() ? v->get<uint64_t>() <= static_cast<uint64_t>(max) &&
                                               static_cast<int64_t>(v->get<uint64_t>()) >= min
                                         : v->get<int64_t>() >= min && v->get<int64_t>() <= max;
  if (!inRange)
    fail(key, "value " + v->dump() + " out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return v->is_number_unsigned() ? static_cast<int64_t>(v->get<uint64_t>()) : v->get<int64_t>();
}

double ObjectReader::number(const char* key, bool required, double min, double max, double dflt) {
  const json* v = find(key, required);
  if (!v) return dflt;
  if (!v->is_number()) fail(key, std::string("expected a number, got ") + v->type_name());
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) fail(key, "value " + v->dump() + " out of range");
  return d;
}

bool ObjectReader::boolean(const char* key, bool required, bool dflt) {
  const json* v = find(key, required);
  if (!v) return dflt;
  if (!v->is_boolean()) fail(key, std::string("expected true or false, got ") + v->type_name());
  return v->get<bool>();
}

uint32_t ObjectReader::hex(const char* key, uint32_t max) {
  std::string s = str(key, false);
  if (s.empty()) return 0;
  bool wellFormed = s.size() > 2 && s.size() <= 10 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  for (size_t i = 2; wellFormed && i < s.size(); ++i)
    wellFormed = std::isxdigit(static_cast<unsigned char>(s[i])) != 0;
  unsigned long v = wellFormed ? std::strtoul(s.c_str() + 2, nullptr, 16) : 0;
  if (!wellFormed || v > max) fail(key, "expected a hex number like 0x1a2b, got '" + s + "'");
  return static_cast<uint32_t>(v);
}

CpuList ObjectReader::cpus(const char* key, bool required) {
  std::string s = text(key, required, "", kMaxCpuListBytes);
  CpuList list;
  Status st = CpuList::parse(s, &list);
  if (!st.isOk()) fail(key, st.message());
  return list;
}

const json& ObjectReader::array(const char* key, bool required) {
  static const json kEmpty = json::array();
  const json* v = find(key, required);
  if (!v) return kEmpty;
  if (!v->is_array()) fail(key, std::string("expected an array, got ") + v->type_name());
  if (v->size() > kMaxArrayItems) fail(key, "more than " + std::to_string(kMaxArrayItems) + " entries");
  return *v;
}

void ObjectReader::finish() {
  for (auto it = j_.begin(); it != j_.end(); ++it)
    if (!seen_.count(it.key())) fail(it.key().substr(0, 64), "unknown key (see src/topo/FORMAT.md)");
}

}  // namespace braid::topo::detail
