// What the plugin tests and their peer process share.
//
// Loads libnccl-net-braid.so the way NCCL does (dlopen, then the versioned
// symbol) and drives it only through that table, so the tests see what NCCL
// sees: through NetApi (netplugin's view of any table version, the one braid
// itself loads plugins with), or through a raw table. Log lines the plugin
// writes through NCCL's logger are kept for the tests to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/common/message_pattern.h"
#include "transports/netplugin/net_api.h"

namespace braid::ncclnet::testing {

struct LogLine {
  ncclDebugLogLevel level;
  std::string text;
};

using netplugin::NetApi;

// The plugin library, opened once per process; null with *error set.
void* openPlugin(std::string* error);
// Its table ncclNetPlugin_v<version> (not yet initialized); null with *error
// set when the library or its symbol is missing.
NetApi* loadPlugin(int version, std::string* error);
// The raw table ncclNetPlugin_v<version>, as NCCL's loader sees it.
const void* rawTable(int version, std::string* error);
// A logger with ncclDebugLogger_t's signature that records every line.
void recordingLogger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                     const char* fmt, ...);
std::vector<LogLine> loggedLines();
// The last WARN line ("" when none).
std::string lastWarning();

using braid::test::pattern;

// Calls connect (when `send` is given) and accept (when `recv` is given) until
// each returned its comm, as NCCL does; the first failure, or ncclSystemError
// after timeoutMs. One end may be in another process.
ncclResult_t establish(const NetApi& net, void* handle, void** send, void* listenComm, void** recv,
                       int timeoutMs = 10000);

// An isend / irecv under way and what test() said of it.
struct Op {
  void* request = nullptr;
  bool done = false;
  int size = -1;
  ncclResult_t result = ncclSuccess;
};
// Tests every op until each is done or failed; false when timeoutMs passed first.
bool driveAll(const NetApi& net, const std::vector<Op*>& ops, int timeoutMs = 20000);

// What main returns. Under a sanitizer, a process whose plugin ran over UCX
// instead ends here with _exit. NCCL's v8 API has no finalize, so the
// plugin's UCX worker and UCX's async thread live until exit, as in a real
// NCCL job, and exit then trips both sanitizers inside UCX: LeakSanitizer
// crashes walking that thread's dynamic TLS ("Tracer caught signal 11"), and
// TSan sees libucs's destructor destroy a lock the async thread still takes.
// Such processes go unchecked at exit only; the tcp cases run the same plugin
// code and are checked, and UCX's transport is checked in braid_ucx_test,
// where it is torn down before exit.
int endProcess(int rc);

// A handle as hex text and back, to pass it between processes.
std::string toHex(const void* data, size_t size);
bool fromHex(const std::string& text, void* out, size_t size);

}  // namespace braid::ncclnet::testing
