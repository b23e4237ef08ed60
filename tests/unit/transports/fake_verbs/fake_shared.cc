// Where the fake fabric's state lives (see fake_fabric.h): the mapping, its
// lock, the liveness of the processes that own records, and the tables and
// arena that records and rings are taken from.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

#include "fake_fabric.h"

namespace braid::fake_verbs {
namespace {

constexpr uint32_t kMagic = 0x62666b76;  // "bfkv"
constexpr uint32_t kReady = 0x52454459;
constexpr int kOpenTimeoutMs = 10000;

std::atomic<Fabric*> gFabric{nullptr};

void complain(const char* name, const char* what) {
  std::fprintf(stderr, "fake libibverbs: fabric %s: %s (%s)\n", name, what, std::strerror(errno));
}

void sleepMs(int ms) {
  timespec pause{0, ms * 1000000L};
  nanosleep(&pause, nullptr);
}

// The creator's part: tables and the arena are zero already.
bool initialise(Shared* shared, const char* name) {
  shared->magic = kMagic;
  shared->bytes = sizeof(Shared);
  shared->nextHandle = 1;
  shared->nextCqId = 1;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  const int rc = pthread_mutex_init(&shared->mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc != 0) return errno = rc, complain(name, "pthread_mutex_init"), false;
  __atomic_store_n(&shared->ready, kReady, __ATOMIC_RELEASE);
  return true;
}

Shared* mapPrivate() {
  void* memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return complain("(private)", "mmap"), nullptr;
  Shared* shared = static_cast<Shared*>(memory);
  if (!initialise(shared, "(private)")) return munmap(memory, sizeof(Shared)), nullptr;
  return shared;
}

// Bounded: an object whose creator died before sizing or initialising it
// (or one of another layout) fails the open rather than hanging it.
bool awaitSize(int fd, const char* name) {
  for (int waited = 0;; ++waited) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return complain(name, "fstat"), false;
    if (st.st_size == static_cast<off_t>(sizeof(Shared))) return true;
    if (st.st_size != 0) return errno = EPROTO, complain(name, "exists with another size"), false;
    if (waited >= kOpenTimeoutMs)
      return errno = ETIMEDOUT, complain(name, "never sized by its creator"), false;
    sleepMs(1);
  }
}

bool awaitReady(const Shared* shared, const char* name) {
  for (int waited = 0; __atomic_load_n(&shared->ready, __ATOMIC_ACQUIRE) != kReady; ++waited) {
    if (waited >= kOpenTimeoutMs)
      return errno = ETIMEDOUT, complain(name, "never initialised by its creator"), false;
    sleepMs(1);
  }
  if (shared->magic != kMagic || shared->bytes != sizeof(Shared))
    return errno = EPROTO, complain(name, "has another layout"), false;
  return true;
}

Shared* mapShared(const char* name) {
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  const bool creator = fd >= 0;
  if (!creator && errno == EEXIST) fd = shm_open(name, O_RDWR, 0);
  if (fd < 0) return complain(name, "shm_open"), nullptr;
  if (creator && ftruncate(fd, sizeof(Shared)) != 0) return complain(name, "ftruncate"), close(fd), nullptr;
  if (!creator && !awaitSize(fd, name)) return close(fd), nullptr;
  void* memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) return complain(name, "mmap"), nullptr;
  Shared* shared = static_cast<Shared*>(memory);
  if (creator ? initialise(shared, name) : awaitReady(shared, name)) return shared;
  munmap(memory, sizeof(Shared));
  return nullptr;
}

Fabric* attach() {
  const char* name = std::getenv("BRAID_FAKE_VERBS_FABRIC");
  Shared* shared = name && *name ? mapShared(name) : mapPrivate();
  if (!shared) return nullptr;
  Fabric* f = new Fabric{};
  f->shared = shared;
  f->self = getpid();
  return f;
}

void detach(Fabric* f) {
  munmap(f->shared, sizeof(Shared));
  delete f;
}

// The child starts without a fabric; the parent's objects are no use there.
void forgetFabricInChild() {
  if (Fabric* f = gFabric.exchange(nullptr)) detach(f);
}

__attribute__((constructor)) void registerForkHandler() {
  pthread_atfork(nullptr, nullptr, forgetFabricInChild);
}

// kill(pid, 0) still finds a zombie, so its state is read too.
bool processIsAlive(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* file = std::fopen(path, "r");
  if (!file) return false;
  char line[512];
  const size_t n = std::fread(line, 1, sizeof(line) - 1, file);
  std::fclose(file);
  line[n] = '\0';
  const char* end = std::strrchr(line, ')');  // the command name may hold anything
  return !end || end[1] != ' ' || (end[2] != 'Z' && end[2] != 'X');
}

void reclaimGone(Fabric& f) {
  Shared& s = *f.shared;
  for (uint32_t slot = 0; slot < kMaxQps; ++slot) {
    if (s.qps[slot].inUse && !isAlive(f, s.qps[slot].owner)) freeQp(f, slot);
  }
  for (uint32_t slot = 0; slot < kMaxCqs; ++slot) {
    if (s.cqs[slot].inUse && !isAlive(f, s.cqs[slot].owner)) freeCq(f, slot);
  }
  for (MrRecord& mr : s.mrs) {
    if (mr.inUse && !isAlive(f, mr.owner)) mr = {};
  }
}

template <typename Record, size_t N>
int findFree(Record (&records)[N]) {
  for (size_t slot = 0; slot < N; ++slot) {
    if (!records[slot].inUse) return static_cast<int>(slot);
  }
  return -1;
}

template <typename Record, size_t N>
int allocSlot(Fabric& f, Record (&records)[N]) {
  int slot = findFree(records);
  if (slot < 0) {
    reclaimGone(f);
    slot = findFree(records);
  }
  return slot;
}

// First fit; -1 when no run of that many chunks is free.
long findChunks(const Shared& s, size_t chunks) {
  size_t run = 0;
  for (size_t i = 0; i < kChunks; ++i) {
    run = s.chunkUsed[i] ? 0 : run + 1;
    if (run == chunks) return static_cast<long>(i + 1 - chunks);
  }
  return -1;
}

}  // namespace

Fabric* tryFabric() {
  Fabric* current = gFabric.load(std::memory_order_acquire);
  if (current) return current;
  Fabric* mine = attach();
  if (!mine) return nullptr;
  if (gFabric.compare_exchange_strong(current, mine, std::memory_order_acq_rel)) return mine;
  detach(mine);  // another thread attached first
  return current;
}

Fabric& fabric() {
  Fabric* f = tryFabric();
  if (!f) std::abort();
  return *f;
}

Lock::Lock() : fabric_(braid::fake_verbs::fabric()) {
  const int rc = pthread_mutex_lock(&fabric_.shared->mutex);
  // A process died holding the lock: what it was changing is as it left it.
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(&fabric_.shared->mutex);
  } else if (rc != 0) {
    errno = rc;
    complain("lock", "pthread_mutex_lock");
    std::abort();
  }
  fabric_.liveCount = 0;
}

Lock::~Lock() {
  for (uint32_t slot = 0; slot < kMaxQps; ++slot) {
    FakeQp* qp = fabric_.localQps[slot];
    if (qp && qp->qp.state != fabric_.shared->qps[slot].state) qp->qp.state = fabric_.shared->qps[slot].state;
  }
  pthread_mutex_unlock(&fabric_.shared->mutex);
}

bool isAlive(Fabric& f, pid_t pid) {
  if (pid == f.self) return true;
  for (int i = 0; i < f.liveCount; ++i) {
    if (f.livePids[i] == pid) return f.liveAnswers[i];
  }
  const bool alive = processIsAlive(pid);
  if (f.liveCount < static_cast<int>(sizeof(f.livePids) / sizeof(f.livePids[0]))) {
    f.livePids[f.liveCount] = pid;
    f.liveAnswers[f.liveCount++] = alive;
  }
  return alive;
}

QpRecord* findQp(Fabric& f, uint32_t qpNum) {
  QpRecord& qp = f.shared->qps[qpNum % kMaxQps];
  return qp.inUse && qp.qpNum == qpNum && isAlive(f, qp.owner) ? &qp : nullptr;
}

MrRecord* findMrByLkey(Fabric& f, uint32_t lkey) {
  MrRecord& mr = f.shared->mrs[lkey % kMaxMrs];
  return mr.inUse && mr.lkey == lkey ? &mr : nullptr;
}

MrRecord* findMrByRkey(Fabric& f, uint32_t rkey) {
  MrRecord& mr = f.shared->mrs[rkey % kMaxMrs];
  return mr.inUse && mr.rkey == rkey ? &mr : nullptr;
}

int allocQpSlot(Fabric& f) { return allocSlot(f, f.shared->qps); }
int allocCqSlot(Fabric& f) { return allocSlot(f, f.shared->cqs); }
int allocMrSlot(Fabric& f) { return allocSlot(f, f.shared->mrs); }

bool allocRing(Fabric& f, Ring* ring, uint32_t capacity, size_t entryBytes) {
  *ring = {};
  ring->capacity = capacity;
  const size_t chunks = (capacity * entryBytes + kChunkBytes - 1) / kChunkBytes;
  if (chunks == 0) return true;
  long first = findChunks(*f.shared, chunks);
  if (first < 0) {
    reclaimGone(f);
    first = findChunks(*f.shared, chunks);
  }
  if (first < 0) return false;
  std::memset(f.shared->chunkUsed + first, 1, chunks);
  ring->offset = static_cast<uint64_t>(first) * kChunkBytes;
  ring->chunks = static_cast<uint32_t>(chunks);
  return true;
}

void freeRing(Fabric& f, Ring* ring) {
  std::memset(f.shared->chunkUsed + ring->offset / kChunkBytes, 0, ring->chunks);
  *ring = {};
}

void freeQp(Fabric& f, uint32_t slot) {
  QpRecord& qp = f.shared->qps[slot];
  freeRing(f, &qp.sends);
  freeRing(f, &qp.recvs);
  qp = {};
  f.localQps[slot] = nullptr;
}

void freeCq(Fabric& f, uint32_t slot) {
  CqRecord& cq = f.shared->cqs[slot];
  freeRing(f, &cq.completions);
  cq = {};
}

}  // namespace braid::fake_verbs
