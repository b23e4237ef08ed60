// A stand-in for libbraid-cuda.so, so that braid's device-buffer paths
// (core/device_staging.h, core/device_direct.h) run in CI, where there is no
// GPU. Its "device memory" is shared-memory pages of this process that it
// keeps a registry of (pointerDevice says device 0 for them). The address
// braid gets is mapped PROT_NONE: braid touching device memory from the host,
// as it must not, crashes the test. The module's own copies and kernels work
// on a second, writable mapping of the same pages (the block's "view"), so
// they need no mprotect per call: that cost the device tests most of their
// time (a TLB shootdown per call, and braid copies in small pieces).
// Work finishes at once, so events and copy streams need no work. What it
// models of a CUDA stream is the one thing braid relies on: work queued after
// streamWaitFlag does not run before the flag is reached (copies, kernels and
// synchronize on that stream wait for it).
// IPC: every allocation is a memfd; its handle names the owner's pid and fd,
// which another process of the same user opens through /proc. The kernels
// are braid's CPU kernels (reduce, divide); the codecs return an error.
// BRAID_FAKE_CUDA_NO_IPC=1 makes IPC fail, as between hosts.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "kernels/codec.h"
#include "kernels/device_module.h"
#include "kernels/reduce.h"

namespace {

using braid::kernels::DeviceCodec;
using braid::kernels::DeviceModule;

constexpr int kFakeError = 999;

std::mutex gMu;
struct Block {
  size_t bytes;
  char* view;  // the same pages, readable and writable, for this module only
};
std::map<uintptr_t, Block> gDeviceBlocks;   // start -> block
std::map<uintptr_t, int> gMemfds;           // start -> memfd, for blocks this process allocated
struct Wait {
  const uint32_t* flag;
  uint32_t value;
};
std::multimap<void*, Wait> gWaits;  // stream -> waits queued on it
thread_local int tlsDevice = 0;

bool reached(const Wait& w) {
  return static_cast<int32_t>(__atomic_load_n(w.flag, __ATOMIC_ACQUIRE) - w.value) >= 0;
}

// Work queued on `stream` starts once its earlier waits are over.
void drain(void* stream) {
  for (;;) {
    bool pending = false;
    {
      std::lock_guard<std::mutex> lock(gMu);
      auto [first, last] = gWaits.equal_range(stream);
      for (auto it = first; it != last;) {
        if (reached(it->second)) {
          it = gWaits.erase(it);
        } else {
          pending = true;
          ++it;
        }
      }
    }
    if (!pending) return;
    sched_yield();
  }
}

const char* errorString(int err) {
  return err == kFakeError ? "not available in the fake CUDA module" : "fake CUDA error";
}
int deviceCount(int* count) {
  *count = 1;
  return 0;
}
int pointerDevice(const void* p, int* device) {
  *device = -1;
  auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(gMu);
  auto it = gDeviceBlocks.upper_bound(at);
  if (it != gDeviceBlocks.begin() && at < std::prev(it)->first + std::prev(it)->second.bytes) *device = 0;
  return 0;
}
size_t pages(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}
// Maps fd twice: PROT_NONE for braid, read-write for the module. false
// leaves nothing mapped.
bool mapBlock(int fd, size_t bytes, void** start, char** view) {
  void* m = mmap(nullptr, pages(bytes), PROT_NONE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return false;
  void* v = mmap(nullptr, pages(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (v == MAP_FAILED) {
    munmap(m, pages(bytes));
    return false;
  }
  *start = m;
  *view = static_cast<char*>(v);
  return true;
}
int alloc(void** p, size_t bytes) {
  const int fd = memfd_create("braid-fake-cuda", MFD_CLOEXEC);
  if (fd < 0) return 2;
  void* m = nullptr;
  char* view = nullptr;
  if (ftruncate(fd, static_cast<off_t>(pages(bytes))) != 0 || !mapBlock(fd, bytes, &m, &view)) {
    close(fd);
    return 2;
  }
  *p = m;
  std::lock_guard<std::mutex> lock(gMu);
  gDeviceBlocks[reinterpret_cast<uintptr_t>(m)] = Block{bytes, view};
  gMemfds[reinterpret_cast<uintptr_t>(m)] = fd;
  return 0;
}
// Unmaps a block (allocated here or opened from another process).
int unmapBlock(void* p) {
  Block block{};
  int fd = -1;
  {
    std::lock_guard<std::mutex> lock(gMu);
    auto it = gDeviceBlocks.find(reinterpret_cast<uintptr_t>(p));
    if (it == gDeviceBlocks.end()) return 1;
    block = it->second;
    const uintptr_t start = it->first;
    gDeviceBlocks.erase(it);
    if (auto f = gMemfds.find(start); f != gMemfds.end()) {
      fd = f->second;
      gMemfds.erase(f);
    }
  }
  munmap(p, pages(block.bytes));
  munmap(block.view, pages(block.bytes));
  if (fd >= 0) close(fd);
  return 0;
}
int release(void* p) { return unmapBlock(p); }
// Where the module reaches p: its block's view for device memory, p itself
// for host memory.
template <typename T>
T* reach(T* p) {
  auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(gMu);
  auto it = gDeviceBlocks.upper_bound(at);
  if (it == gDeviceBlocks.begin() || at >= std::prev(it)->first + std::prev(it)->second.bytes) return p;
  return reinterpret_cast<T*>(std::prev(it)->second.view + (at - std::prev(it)->first));
}
int copy(void* dst, const void* src, size_t bytes, void* stream) {
  drain(stream);
  if (bytes == 0) return 0;
  memmove(reach(dst), reach(src), bytes);
  return 0;
}
int synchronize(void* stream) {
  drain(stream);
  return 0;
}
// braid's CPU kernels on the opened blocks (dst may be a or b).
int reduce(void* d, const void* a, const void* b, size_t n, int dtype, int op, void* stream) {
  drain(stream);
  if (n == 0) return 0;
  braid::kernels::reduce(reach(d), reach(a), reach(b), n, static_cast<braid::DataType>(dtype),
                         static_cast<braid::RedOp>(op));
  return 0;
}
int divide(void* p, size_t n, int dtype, uint64_t divisor, void* stream) {
  drain(stream);
  if (n == 0) return 0;
  braid::kernels::divideBy(reach(p), n, static_cast<braid::DataType>(dtype), divisor);
  return 0;
}
// The codecs of codec.h, run here as the real module runs its kernels: the
// values on the device, the wire in host memory the kernels reach.
std::atomic<long> gCodings{0};
braid::kernels::CodecParams paramsOf(const DeviceCodec* c) {
  braid::kernels::CodecParams p;
  p.format = static_cast<braid::kernels::WireFormat>(c->format);
  p.hostType = static_cast<braid::DataType>(c->hostType);
  p.lossScale = c->lossScale;
  p.blockSize = c->blockSize;
  return p;
}
int encode(const DeviceCodec* c, const void* src, size_t n, void* dst, void* stream) {
  drain(stream);
  if (n == 0) return 0;
  braid::kernels::encode(paramsOf(c), reach(src), n, reach(dst));
  gCodings.fetch_add(1, std::memory_order_relaxed);
  return 0;
}
int decode(const DeviceCodec* c, const void* src, size_t n, void* dst, void* stream) {
  drain(stream);
  if (n == 0) return 0;
  braid::kernels::decode(paramsOf(c), reach(src), n, reach(dst));
  gCodings.fetch_add(1, std::memory_order_relaxed);
  return 0;
}
int getDevice(int* device) {
  *device = tlsDevice;
  return 0;
}
int setDevice(int device) {
  if (device != 0) return kFakeError;
  tlsDevice = device;
  return 0;
}
int hostAlloc(void** p, size_t bytes, int) {
  *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  return *p ? 0 : 2;
}
int hostRelease(void* p) {
  free(p);
  return 0;
}
int streamCreate(void** stream) {
  *stream = new char;
  return 0;
}
int streamDestroy(void* stream) {
  delete static_cast<char*>(stream);
  return 0;
}
int eventCreate(void** event) { return streamCreate(event); }
int eventDestroy(void* event) { return streamDestroy(event); }
int eventRecord(void*, void*) { return 0; }
int eventSynchronize(void*) { return 0; }
int streamWaitEvent(void*, void*) { return 0; }
int streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value) {
  std::lock_guard<std::mutex> lock(gMu);
  gWaits.emplace(stream, Wait{flag, value});
  return 0;
}
const char* flagWaitMechanism() { return "fake"; }
struct IpcHandle {
  int32_t pid, fd;
};
static_assert(sizeof(IpcHandle) <= braid::kernels::kIpcHandleBytes);
bool ipcRefused() {
  const char* v = getenv("BRAID_FAKE_CUDA_NO_IPC");
  return v && strcmp(v, "1") == 0;
}
int ipcGetHandle(void* p, void* handle) {
  if (ipcRefused()) return kFakeError;
  std::lock_guard<std::mutex> lock(gMu);
  auto it = gMemfds.find(reinterpret_cast<uintptr_t>(p));
  if (it == gMemfds.end()) return 1;  // not the start of an allocation of this process
  memset(handle, 0, braid::kernels::kIpcHandleBytes);
  const IpcHandle h{static_cast<int32_t>(getpid()), it->second};
  memcpy(handle, &h, sizeof(h));
  return 0;
}
int ipcOpenHandle(const void* handle, void** p) {
  if (ipcRefused()) return kFakeError;
  IpcHandle h;
  memcpy(&h, handle, sizeof(h));
  const std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return 2;
  struct stat st {};
  void* m = nullptr;
  char* view = nullptr;
  const bool mapped =
      fstat(fd, &st) == 0 && st.st_size > 0 && mapBlock(fd, static_cast<size_t>(st.st_size), &m, &view);
  close(fd);
  if (!mapped) return 2;
  *p = m;
  std::lock_guard<std::mutex> lock(gMu);
  gDeviceBlocks[reinterpret_cast<uintptr_t>(m)] = Block{static_cast<size_t>(st.st_size), view};
  return 0;
}
int ipcCloseHandle(void* p) { return unmapBlock(p); }
int preloadKernels() { return 0; }

const DeviceModule kModule = {braid::kernels::kDeviceModuleAbi,
                              errorString,
                              deviceCount,
                              pointerDevice,
                              alloc,
                              release,
                              copy,
                              synchronize,
                              reduce,
                              divide,
                              encode,
                              decode,
                              getDevice,
                              setDevice,
                              hostAlloc,
                              hostRelease,
                              streamCreate,
                              streamDestroy,
                              eventCreate,
                              eventDestroy,
                              eventRecord,
                              eventSynchronize,
                              streamWaitEvent,
                              streamWaitFlag,
                              flagWaitMechanism,
                              ipcGetHandle,
                              ipcOpenHandle,
                              ipcCloseHandle,
                              preloadKernels};

}  // namespace

extern "C" __attribute__((visibility("default"))) const DeviceModule* braidDeviceModule() { return &kModule; }

// Encodes and decodes this process has run (the tests read it with dlsym to
// see that a call coded on the "device").
extern "C" __attribute__((visibility("default"))) long braidFakeCudaCodings() {
  return gCodings.load(std::memory_order_relaxed);
}
