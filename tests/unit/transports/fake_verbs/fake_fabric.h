// The model behind the fake libibverbs: one RDMA fabric shared by every
// endpoint that opens it. Its whole state lives in one mapping (see Shared),
// guarded by one lock that each exported entry point takes once:
//
// - BRAID_FAKE_VERBS_FABRIC unset: a private anonymous mapping, so the
//   fabric spans the calling process only (tests drive both ends of a
//   connection, sometimes from several threads).
// - BRAID_FAKE_VERBS_FABRIC=/name: the POSIX shared memory object of that
//   name, so every process that sets the same name shares one fabric (the
//   ranks of a multi-process test). The first process to open it creates and
//   initialises it; the others wait, bounded, until it is initialised.
//   Nobody here unlinks it: the test that chose the name calls
//   shm_unlink(name) once its processes are done with it.
//
// The variable is read at the first use, and again at the first use after a
// fork: a forked child gets a fresh fabric (the parent's objects are no
// use there, as with real verbs), so ranks forked from a test process that
// used the library in-process still reach the shared one.
//
// The mapping holds no pointer into any process's memory: records name their
// owner by pid, each other by slot or key, and the rings of work requests and
// completions by offset into the mapping's arena. The ibv_* structs handed to
// the caller are the owner's private allocations (Fake* below), each naming
// its record. A send is executed by whichever process polls a CQ next, under
// the lock: memory of that process is copied directly, memory of another
// through process_vm_readv/process_vm_writev with the pid of the MR's owner.
// A QP whose owner is gone (no such pid, or a zombie) counts as destroyed,
// and records of gone processes are reclaimed when a table or the arena fills.
#pragma once

#include <infiniband/verbs.h>
#include <pthread.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace braid::fake_verbs {

// Small on purpose, so that callers must split large RDMA writes.
inline constexpr uint32_t kMaxMessageBytes = 256 * 1024;
inline constexpr uint32_t kMaxInlineBytes = 64;
inline constexpr uint16_t kPortLid = 1;
inline constexpr uint32_t kMaxQpWr = 4096;
inline constexpr uint32_t kMaxSge = 16;
inline constexpr int kMaxCqe = 65536;
// Table sizes, reported as the device's max_qp, max_cq and max_mr.
inline constexpr uint32_t kMaxQps = 256;
inline constexpr uint32_t kMaxCqs = 256;
inline constexpr uint32_t kMaxMrs = 4096;
// Rings are carved from an arena in chunks; creating a QP or CQ whose rings
// do not fit fails with ENOMEM. The mapping is sparse: only touched pages cost.
inline constexpr size_t kChunkBytes = 4096;
inline constexpr size_t kArenaBytes = size_t{48} << 20;
inline constexpr size_t kChunks = kArenaBytes / kChunkBytes;

struct Ring {
  uint64_t offset = 0;  // into Shared::arena
  uint32_t chunks = 0;
  uint32_t capacity = 0;
  uint32_t head = 0;
  uint32_t count = 0;
};

struct SendWork {
  uint64_t wrId;
  ibv_wr_opcode opcode;
  uint32_t signaled;
  uint32_t immData;  // network byte order, passed through untouched
  uint32_t rkey;
  uint64_t remoteAddr;
  uint64_t length;
  uint32_t numSge;    // gathered at execution time
  uint32_t isInline;  // copied at post time instead of sges
  ibv_sge sges[kMaxSge];
  uint8_t inlineData[kMaxInlineBytes];
};

struct RecvWork {
  uint64_t wrId;
  uint32_t numSge;
  ibv_sge sges[kMaxSge];
};

struct MrRecord {
  uint32_t inUse;
  pid_t owner;
  uint32_t lkey;
  uint32_t rkey;
  uint32_t pdHandle;
  int access;
  uint64_t addr;  // in the owner's address space
  uint64_t length;
};

struct CqRecord {
  uint32_t inUse;
  pid_t owner;
  uint32_t id;
  uint32_t overrun;  // sticky, as IBV_EVENT_CQ_ERR is on hardware
  Ring completions;  // of ibv_wc, capacity cqe
};

struct QpRecord {
  uint32_t inUse;
  pid_t owner;
  uint32_t qpNum;
  uint32_t pdHandle;
  uint32_t sendCq;  // CQ slots
  uint32_t recvCq;
  ibv_qp_state state;
  uint32_t signalAll;
  uint32_t destQpNum;
  ibv_qp_cap cap;
  Ring sends;  // posted and not yet executed, in posting order
  Ring recvs;
};

struct Shared {
  uint32_t magic;
  uint32_t ready;  // kReady once initialised, stored last with release
  uint64_t bytes;
  pthread_mutex_t mutex;  // process-shared and robust
  // Sequences that keys, QP numbers and handles are made from.
  uint32_t keySeq;
  uint32_t qpSeq;
  uint32_t nextHandle;
  uint32_t nextCqId;
  QpRecord qps[kMaxQps];
  CqRecord cqs[kMaxCqs];
  MrRecord mrs[kMaxMrs];
  uint8_t chunkUsed[kChunks];
  alignas(4096) uint8_t arena[kArenaBytes];
};

// Each Fake* starts with the ibv_* struct handed to the caller, so the
// caller's pointer casts back to the Fake* (see fake()). They belong to the
// process that created them; the counts are guarded by the fabric lock.
struct FakeContext {
  ibv_context context;
  int pds = 0;
  int cqs = 0;
};

struct FakePd {
  ibv_pd pd;
  int mrs = 0;
  int qps = 0;
};

struct FakeMr {
  ibv_mr mr;
  uint32_t slot = 0;
};

struct FakeCq {
  ibv_cq cq;
  uint32_t slot = 0;
  int qps = 0;
};

struct FakeQp {
  ibv_qp qp;  // qp.state mirrors the record's, refreshed whenever the lock is released
  uint32_t slot = 0;
};

// This process's view of the fabric.
struct Fabric {
  Shared* shared = nullptr;
  pid_t self = 0;
  FakeQp* localQps[kMaxQps] = {};  // this process's QPs, by slot
  // Liveness of other processes, as learnt during the current lock hold.
  pid_t livePids[8] = {};
  bool liveAnswers[8] = {};
  int liveCount = 0;
};

// Attaches at the first call (and the first after a fork); nullptr with errno
// set and a line on stderr when the fabric cannot be opened.
Fabric* tryFabric();
// The attached fabric; aborts when it cannot be opened (only reachable with
// objects that came from a fabric, so never in practice).
Fabric& fabric();

// Holds the fabric lock; on release refreshes qp.state of this process's QPs.
class Lock {
 public:
  Lock();
  ~Lock();
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  Fabric& fabric() { return fabric_; }

 private:
  Fabric& fabric_;
};

template <typename Fake, typename Verbs>
Fake* fake(Verbs* verbs) {
  return reinterpret_cast<Fake*>(verbs);
}

// The ibv_context ops that verbs.h's inline ibv_poll_cq, ibv_post_send and
// ibv_post_recv dispatch to. Each takes the fabric lock.
int pollCq(ibv_cq* cq, int capacity, ibv_wc* out);
int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr);
int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr);

// The rest expect the fabric lock held.
bool isAlive(Fabric& f, pid_t pid);
QpRecord* findQp(Fabric& f, uint32_t qpNum);  // nullptr when destroyed or its owner is gone
MrRecord* findMrByLkey(Fabric& f, uint32_t lkey);
MrRecord* findMrByRkey(Fabric& f, uint32_t rkey);
void moveToError(Fabric& f, QpRecord& qp);  // flushes every queued send and posted recv
void moveToReset(QpRecord& qp);             // drops them silently
// Record slots and arena space; reclaim what gone processes left when full.
int allocQpSlot(Fabric& f);  // -1 when full
int allocCqSlot(Fabric& f);
int allocMrSlot(Fabric& f);
bool allocRing(Fabric& f, Ring* ring, uint32_t capacity, size_t entryBytes);
void freeRing(Fabric& f, Ring* ring);
void freeQp(Fabric& f, uint32_t slot);
void freeCq(Fabric& f, uint32_t slot);

template <typename T>
T& ringAt(Fabric& f, const Ring& ring, uint32_t index) {
  return reinterpret_cast<T*>(f.shared->arena + ring.offset)[(ring.head + index) % ring.capacity];
}

template <typename T>
void ringPush(Fabric& f, Ring& ring, const T& value) {
  ++ring.count;
  ringAt<T>(f, ring, ring.count - 1) = value;
}

template <typename T>
T ringPop(Fabric& f, Ring& ring) {
  T value = ringAt<T>(f, ring, 0);
  ring.head = (ring.head + 1) % ring.capacity;
  --ring.count;
  return value;
}

}  // namespace braid::fake_verbs
