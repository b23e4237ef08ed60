#include "memory.h"

#include <braid/braid.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "device_buffers.h"

namespace braid::perf {

namespace {

void* hostAllocate(size_t bytes) {
  const size_t rounded = ((bytes ? bytes : 1) + 4095) / 4096 * 4096;
  return std::aligned_alloc(4096, rounded);
}

// The device address at host pointer p's offset in whichever host buffer
// holds it (in place, the send region lies inside recv).
// (Compared as integers: < between two allocations is unspecified in C++.)
char* onDevice(const Buffers& b, const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  const auto send = reinterpret_cast<uintptr_t>(b.send);
  if (at >= send && at < send + b.bytes) return static_cast<char*>(b.deviceSend) + (at - send);
  return static_cast<char*>(b.deviceRecv) + (at - reinterpret_cast<uintptr_t>(b.recv));
}

}  // namespace

std::string allocateBuffers(MemoryKind kind, size_t bytes, Buffers* out) {
  if (kind == MemoryKind::kShareable) {
    *out = Buffers{nullptr, nullptr, bytes};
    out->shareable = true;
    for (void** p : {&out->send, &out->recv})
      if (braidResult_t rc = braidMemAlloc(p, bytes ? bytes : 1); rc != braidSuccess)
        return std::string("braidMemAlloc of ") + std::to_string(bytes) +
               " bytes: " + braidGetLastError(nullptr);
    return "";
  }
  *out = Buffers{hostAllocate(bytes), hostAllocate(bytes), bytes};
  if (out->send == nullptr || out->recv == nullptr)
    return "cannot allocate 2 x " + std::to_string(bytes) + " bytes of host memory";
  if (kind == MemoryKind::kHost) return "";
  if (std::string err = device::allocate(bytes, &out->deviceSend); !err.empty()) return err;
  return device::allocate(bytes, &out->deviceRecv);
}

void freeBuffers(Buffers& b) {
  device::release(b.deviceSend);
  device::release(b.deviceRecv);
  if (b.shareable) {
    for (void* p : {b.send, b.recv})
      if (p) (void)braidMemFree(p);
  } else {
    std::free(b.send);
    std::free(b.recv);
  }
  b = Buffers{};
}

std::string stageInputs(const Buffers& b, const Layout& l, size_t typeSize, bool inPlace,
                        const CallBuffers& host, CallBuffers* call) {
  if (b.deviceRecv == nullptr) {
    *call = host;
    return "";
  }
  if (inPlace) {
    const size_t n = std::max(l.sendCount, l.recvCount) * typeSize;
    if (std::string err = device::upload(b.deviceRecv, b.recv, n); !err.empty()) return err;
  } else {
    if (std::string err = device::upload(b.deviceSend, b.send, l.sendCount * typeSize); !err.empty())
      return err;
    if (std::string err = device::upload(b.deviceRecv, b.recv, l.recvCount * typeSize); !err.empty())
      return err;
  }
  *call = CallBuffers{onDevice(b, host.send), onDevice(b, host.recv)};
  return "";
}

std::string fetchResult(const Buffers& b, const Layout& l, size_t typeSize, const CallBuffers& host,
                        const CallBuffers& call) {
  if (b.deviceRecv == nullptr) return "";
  return device::download(host.recv, call.recv, l.recvCount * typeSize);
}

int localRank() {
  for (const char* name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                           "RANK", "BRAID_RANK"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0) return static_cast<int>(r);
  }
  return 0;
}

}  // namespace braid::perf
