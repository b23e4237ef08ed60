#include "parse.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace braid::trace {
namespace {

using Json = nlohmann::json;

// Reads the fields of one JSON object, remembering the first problem so the
// caller can read every field and check once at the end.
class Fields {
 public:
  Fields(const Json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  uint64_t u64(const char* key) {
    const Json* v = get(key);
    if (v == nullptr) return 0;
    // nlohmann stores non-negative integers as unsigned; anything else
    // (negative, fractional, too large for 64 bits) is not a count or a time.
    if (v->is_number_unsigned()) return v->get<uint64_t>();
    fail(key, "a non-negative integer", *v);
    return 0;
  }

  int64_t i64(const char* key) {
    const Json* v = get(key);
    if (v == nullptr) return 0;
    if (v->is_number_integer() && !v->is_number_unsigned()) return v->get<int64_t>();
    if (v->is_number_unsigned() && v->get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()))
      return static_cast<int64_t>(v->get<uint64_t>());
    fail(key, "an integer", *v);
    return 0;
  }

  int rank(const char* key, int64_t min) {
    int64_t v = i64(key);
    if (error_.empty() && (v < min || v > std::numeric_limits<int>::max())) {
      error_ = where_ + key + ": " + std::to_string(v) + " is out of range";
      return 0;
    }
    return static_cast<int>(v);
  }

  std::string str(const char* key, bool required = true) {
    if (!required && !obj_.contains(key)) return "";
    const Json* v = get(key);
    if (v == nullptr) return "";
    if (v->is_string()) return v->get<std::string>();
    fail(key, "a string", *v);
    return "";
  }

  const Json* array(const char* key) {
    const Json* v = get(key);
    if (v == nullptr || v->is_array()) return v;
    fail(key, "an array", *v);
    return nullptr;
  }

  void setError(std::string e) {
    if (error_.empty()) error_ = std::move(e);
  }
  const std::string& error() const { return error_; }

 private:
  const Json* get(const char* key) {
    if (!error_.empty()) return nullptr;
    auto it = obj_.find(key);
    if (it == obj_.end()) {
      error_ = where_ + key + ": missing";
      return nullptr;
    }
    return &*it;
  }

  void fail(const char* key, const char* expected, const Json& got) {
    if (error_.empty())
      error_ = where_ + key + ": expected " + expected + ", got " + got.dump().substr(0, 40);
  }

  const Json& obj_;
  std::string where_;  // "file: " or "file: ops[3]."
  std::string error_;
};

bool parseState(const std::string& s, OpState* out) {
  if (s == "enqueued")
    *out = OpState::kEnqueued;
  else if (s == "started")
    *out = OpState::kStarted;
  else if (s == "completed")
    *out = OpState::kCompleted;
  else if (s == "failed")
    *out = OpState::kFailed;
  else
    return false;
  return true;
}

std::string parseOp(const Json& j, const std::string& where, OpRecord* op) {
  if (!j.is_object()) return where.substr(0, where.size() - 1) + ": expected an object";
  Fields f(j, where);
  op->ticket = f.u64("ticket");
  op->seq = f.u64("seq");
  op->op = f.str("op");
  op->dtype = f.str("dtype");
  op->count = f.u64("count");
  op->rootOrPeer = f.i64("root_or_peer");
  op->algorithm = f.str("algorithm");
  const std::string state = f.str("state");
  op->enqueuedNs = f.u64("enqueued_ns");
  op->startedNs = f.u64("started_ns");
  op->endedNs = f.u64("ended_ns");
  op->bytes = f.u64("bytes");
  op->error = f.str("error", /*required=*/false);
  if (f.error().empty() && !parseState(state, &op->state))
    f.setError(where + "state: expected enqueued, started, completed or failed, got \"" + state + "\"");
  if (f.error().empty() && op->op.empty()) f.setError(where + "op: empty");
  return f.error();
}

}  // namespace

std::string parseDump(const std::string& text, const std::string& name, Dump* out) {
  // The parser's exceptions stay inside this function; callers get values.
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return name + ": not a braid-trace dump (not valid JSON)";
  if (!doc.is_object()) return name + ": not a braid-trace dump (expected a JSON object)";
  *out = Dump();
  out->file = name;
  Fields f(doc, name + ": ");
  out->nranks = f.rank("nranks", 1);
  out->rank = f.rank("rank", 0);
  out->host = f.str("host");
  out->pid = f.i64("pid");
  out->nowNs = f.u64("now_ns");
  const Json* ops = f.array("ops");
  if (!f.error().empty()) return f.error();
  if (out->rank >= out->nranks)
    return name + ": rank " + std::to_string(out->rank) + " is not below nranks " +
           std::to_string(out->nranks);
  out->ops.resize(ops->size());
  for (size_t i = 0; i < ops->size(); ++i) {
    std::string e = parseOp((*ops)[i], name + ": ops[" + std::to_string(i) + "].", &out->ops[i]);
    if (!e.empty()) return e;
  }
  return "";
}

}  // namespace braid::trace
