// One case of the matrix on one rank: its buffers (with guard bytes), the
// braid calls that run it, and the check of every byte afterwards.
//
// Layout of a GuardedBuffer: [guard | body | guard], all filled with junk at
// construction. After the op, every byte of the recv buffer must equal either
// the expected result (inside an expected region), anything (inside a
// don't-care region), or what it held before the op (everywhere else: the
// guards, the gaps between all-to-all-v blocks, a non-root's reduce buffer).
// The send buffer of an out-of-place op must be unchanged, guards included.
#pragma once

#include <braid/braid.h>

#include <deque>
#include <string>
#include <vector>

#include "data.h"
#include "device_memory.h"
#include "matrix.h"

namespace braid::itest {

class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  GuardedBuffer() = default;
  GuardedBuffer(size_t bytes, uint64_t junkSeed);
  uint8_t* data() { return storage_.data() + kGuard; }
  const Bytes& storage() const { return storage_; }
  Bytes& storage() { return storage_; }
  bool empty() const { return storage_.empty(); }

 private:
  Bytes storage_;
};

class CaseRun {
 public:
  // shared: the matrix's shared memory (barrier counter).
  CaseRun(const Case& c, int rank, int nranks, void* shared);
  ~CaseRun();
  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;
  // Runs the case on device buffers: launch() copies both buffers (guards
  // included) to device memory and calls braid with those; collect() copies
  // them back once the op is done, before verify(). Ranks in the case's
  // shareableRanks do the same with braidMemAlloc memory (host mirrors).
  void useDevice(const DeviceMemory* device) { device_ = device; }
  // Issues the case's braid calls on stream (NULL: inline). On failure returns
  // the code and names the call in *call.
  braidResult_t launch(braidComm_t comm, braidStream_t stream, std::string* call);
  void collect();
  // True when every byte is as expected; else *error describes the first bad one.
  bool verify(std::string* error);
  const Case& spec() const { return c_; }

 private:
  struct Region {
    size_t offset, count;  // in elements, relative to the recv body
    const Bytes* pattern;  // null: don't care
  };
  const Bytes& own(Bytes b);
  void expect(size_t offset, size_t count, const Bytes& pattern);
  void setupReduction();
  void setupBlocks();
  void setupAllToAllv();
  braidResult_t launchGroup(braidComm_t comm, braidStream_t stream, std::string* call);
  braidResult_t launchHost(braidComm_t comm, braidStream_t stream, std::string* call);
  // The case's braid calls, reductions with `op`.
  braidResult_t launchCalls(braidComm_t comm, braidStream_t stream, braidRedOp_t op, std::string* call);
  void* onMirror(const void* hostPtr) const;
  bool shareableHere() const;
  void* allocMirror(size_t bytes) const;
  void copyMirror(void* dst, const void* src, size_t bytes) const;
  void releaseMirror(void* p) const;

  Case c_;
  int me_, n_;
  size_t es_;
  void* shared_;
  GuardedBuffer send_, recv_;
  Bytes sendInit_, recvInit_;
  const void* sendPtr_ = nullptr;
  void* recvPtr_ = nullptr;
  std::deque<Bytes> patterns_;  // stable addresses for Region::pattern
  std::vector<Region> regions_;
  std::vector<size_t> sendCounts_, sendDispls_, recvCounts_, recvDispls_;
  const DeviceMemory* device_ = nullptr;
  void* mirrorSend_ = nullptr;  // device or braidMemAlloc mirrors of send_ / recv_ storage (guards included)
  void* mirrorRecv_ = nullptr;
};

}  // namespace braid::itest
