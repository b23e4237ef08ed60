#include "plugin_test_util.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace braid::ncclnet::testing {
namespace {

std::mutex logMu;
std::vector<LogLine> lines;

}  // namespace

void* openPlugin(std::string* error) {
  static std::string why;
  static void* lib = [] {
    void* opened = dlopen(BRAID_NCCL_NET_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!opened) why = dlerror();
    return opened;
  }();
  if (!lib) *error = why;
  return lib;
}

const void* rawTable(int version, std::string* error) {
  void* lib = openPlugin(error);
  if (!lib) return nullptr;
  const std::string symbol = "ncclNetPlugin_v" + std::to_string(version);
  const void* table = dlsym(lib, symbol.c_str());
  if (!table) *error = "no " + symbol + " in " BRAID_NCCL_NET_PLUGIN_PATH;
  return table;
}

NetApi* loadPlugin(int version, std::string* error) {
  void* lib = openPlugin(error);
  if (!lib) return nullptr;
  static std::map<int, NetApi> loaded;
  if (auto it = loaded.find(version); it != loaded.end()) return &it->second;
  NetApi api;
  if (Status st = NetApi::find(lib, BRAID_NCCL_NET_PLUGIN_PATH, version, &api); !st.isOk()) {
    *error = st.message();
    return nullptr;
  }
  return &loaded.emplace(version, api).first->second;
}

void recordingLogger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::lock_guard lock(logMu);
  lines.push_back({level, buf});
}

std::vector<LogLine> loggedLines() {
  std::lock_guard lock(logMu);
  return lines;
}

std::string lastWarning() {
  std::lock_guard lock(logMu);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->level == NCCL_LOG_WARN) return it->text;
  return "";
}

ncclResult_t establish(const NetApi& net, void* handle, void** send, void* listenComm, void** recv,
                       int timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (std::chrono::steady_clock::now() < deadline) {
    if (send && !*send)
      if (ncclResult_t r = net.connect(0, handle, send); r != ncclSuccess) return r;
    if (recv && !*recv)
      if (ncclResult_t r = net.accept(listenComm, recv); r != ncclSuccess) return r;
    if ((!send || *send) && (!recv || *recv)) return ncclSuccess;
  }
  return ncclSystemError;
}

bool driveAll(const NetApi& net, const std::vector<Op*>& ops, int timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (Op* op : ops) {
      if (op->done) continue;
      int done = 0;
      op->result = net.test(op->request, &done, &op->size);
      op->done = done || op->result != ncclSuccess;
      all &= op->done;
    }
    if (all) return true;
  }
  return false;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BRAID_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BRAID_UNDER_SANITIZER 1
#endif
#endif

int endProcess(int rc) {
#ifdef BRAID_UNDER_SANITIZER
  const char* net = std::getenv("BRAID_NCCL_NET");
  if (net && std::string(net) == "ucx") {
    std::fflush(nullptr);
    _exit(rc);
  }
#endif
  return rc;
}

std::string toHex(const void* data, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    uint8_t b = static_cast<const uint8_t*>(data)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

bool fromHex(const std::string& text, void* out, size_t size) {
  if (text.size() != 2 * size) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < size; ++i) {
    int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace braid::ncclnet::testing
