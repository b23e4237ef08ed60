#include "core/device_pools.h"

#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace braid::core {
namespace {

constexpr size_t kMinBlock = size_t{1} << 20;
constexpr size_t kFlagsPerPage = 4096 / sizeof(uint32_t);

struct Pools {
  std::mutex mu;
  std::multimap<size_t, uint8_t*> freeBlocks;  // capacity -> block
  std::map<int, std::vector<void*>> freeStreams, freeEvents;
  std::vector<uint32_t*> freeFlags;
};

// Never destroyed (see the header).
Pools& pools() {
  static Pools* p = new Pools;
  return *p;
}

size_t roundUp(size_t bytes) {
  size_t c = kMinBlock;
  while (c < bytes) c <<= 1;
  return c;
}

}  // namespace

Status cudaFailure(const kernels::DeviceModule& m, int err, const std::string& what) {
  return Status(Code::kCudaError, what + ": " + m.errorString(err));
}

DeviceScope::DeviceScope(const kernels::DeviceModule& m, int device) : m_(m) {
  if (int err = m.getDevice(&previous_); err != 0) {
    status_ = cudaFailure(m, err, "cudaGetDevice");
    previous_ = -1;
    return;
  }
  if (previous_ == device) return;
  if (int err = m.setDevice(device); err != 0) {
    status_ = cudaFailure(m, err, "cudaSetDevice(" + std::to_string(device) + ")");
    previous_ = -1;
  }
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) (void)m_.setDevice(previous_);
}

PinnedBlock& PinnedBlock::operator=(PinnedBlock&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
  }
  return *this;
}

Status PinnedBlock::acquire(const kernels::DeviceModule& m, size_t bytes, PinnedBlock* out) {
  out->reset();
  Pools& p = pools();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.freeBlocks.lower_bound(bytes);  // the smallest that fits
    if (it != p.freeBlocks.end()) {
      out->capacity_ = it->first;
      out->data_ = it->second;
      p.freeBlocks.erase(it);
      return Status::ok();
    }
  }
  // Powers of two, so that calls of similar sizes share blocks.
  const size_t capacity = roundUp(bytes);
  void* data = nullptr;
  if (int err = m.hostAlloc(&data, capacity, 0); err != 0)
    return cudaFailure(m, err, "cudaHostAlloc of " + std::to_string(capacity) + " staging bytes");
  out->data_ = static_cast<uint8_t*>(data);
  out->capacity_ = capacity;
  return Status::ok();
}

void PinnedBlock::reset() {
  if (data_ == nullptr) return;
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mu);
  p.freeBlocks.emplace(capacity_, data_);
  data_ = nullptr;
}

namespace {

Status acquireFrom(std::map<int, std::vector<void*>> Pools::*which, int device, void** out,
                   const std::function<int(void**)>& create, const kernels::DeviceModule& m,
                   const char* what) {
  Pools& p = pools();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    std::vector<void*>& free = (p.*which)[device];
    if (!free.empty()) {
      *out = free.back();
      free.pop_back();
      return Status::ok();
    }
  }
  if (int err = create(out); err != 0) return cudaFailure(m, err, what);
  return Status::ok();
}

void releaseTo(std::map<int, std::vector<void*>> Pools::*which, int device, void* object) {
  if (object == nullptr) return;
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mu);
  (p.*which)[device].push_back(object);
}

}  // namespace

Status acquireStream(const kernels::DeviceModule& m, int device, void** stream) {
  return acquireFrom(&Pools::freeStreams, device, stream, m.streamCreate, m, "cudaStreamCreateWithFlags");
}
void releaseStream(int device, void* stream) { releaseTo(&Pools::freeStreams, device, stream); }

Status acquireEvent(const kernels::DeviceModule& m, int device, void** event) {
  return acquireFrom(&Pools::freeEvents, device, event, m.eventCreate, m, "cudaEventCreateWithFlags");
}
void releaseEvent(int device, void* event) { releaseTo(&Pools::freeEvents, device, event); }

Status acquireFlag(const kernels::DeviceModule& m, uint32_t** flag) {
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.freeFlags.empty()) {
    void* page = nullptr;
    if (int err = m.hostAlloc(&page, kFlagsPerPage * sizeof(uint32_t), 1); err != 0)
      return cudaFailure(m, err, "cudaHostAlloc of a mapped flag page");
    auto* flags = static_cast<uint32_t*>(page);
    for (size_t i = kFlagsPerPage; i-- > 0;) {
      flags[i] = 0;
      p.freeFlags.push_back(&flags[i]);
    }
  }
  *flag = p.freeFlags.back();
  p.freeFlags.pop_back();
  return Status::ok();
}

void releaseFlag(uint32_t* flag) {
  if (flag == nullptr) return;
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mu);
  p.freeFlags.push_back(flag);
}

}  // namespace braid::core
