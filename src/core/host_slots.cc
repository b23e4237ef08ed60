#include "core/host_slots.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/cross_memory.h"
#include "base/log.h"
#include "core/bootstrap/bootstrap.h"
#include "transports/shm/doorbell.h"

namespace braid::core {
namespace {

constexpr uint64_t kMagic = 0x62726169642d736cULL;  // "braid-sl"

struct AreaHeader {
  uint64_t magic;
  uint64_t nranks;
  uint64_t slotBytes;
  uint64_t cellBytes;
};

size_t roundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

void writeHeader(void* base, int nranks, size_t slotBytes, size_t cellBytes) {
  AreaHeader h{kMagic, static_cast<uint64_t>(nranks), slotBytes, cellBytes};
  std::memcpy(base, &h, sizeof(h));
}

bool headerMatches(const void* base, int nranks, size_t slotBytes, size_t cellBytes) {
  AreaHeader h;
  std::memcpy(&h, base, sizeof(h));
  return h.magic == kMagic && h.nranks == static_cast<uint64_t>(nranks) && h.slotBytes == slotBytes &&
         h.cellBytes == cellBytes;
}

// What rank 0 tells everyone: where the area is. Fixed size for allGather.
struct Offer {
  char name[96];
  uint64_t slotBytes;  // 0: no area (rank 0 could not or was told not to make one)
  uint64_t areaBytes;
  uint64_t pullMinBlockBytes;  // rank 0's pull window; 0: no pulls
  uint64_t pullMaxOutputBytes;
};
static_assert(sizeof(Offer) == 128);

// What a rank tells everyone so that they can test reading its memory: a
// word at `address` in process `pid` holds `value`. Fixed size for allGather.
struct PullProbe {
  uint64_t pid;
  uint64_t address;
  uint64_t value;
  uint64_t wants;  // 0: this rank declines pulls
};

// Whether every rank may read every other rank's memory (and all want to):
// each rank probes every peer's word, then all learn every rank's verdict.
// The words live on the probing ranks' stacks, which the second allGather
// keeps alive until everyone has read them. *pids gets every rank's pid.
Status probePulls(bootstrap::Bootstrap& bootstrap, bool wanted, bool* all, std::vector<pid_t>* pids) {
  const int n = bootstrap.nranks(), rank = bootstrap.rank();
  // Distinct per process and moment: what another process at the same pid
  // (another pid namespace, a recycled pid) will not hold at that address.
  // Volatile: only other processes read it, so it must stay in memory.
  volatile const uint64_t word =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      static_cast<uint64_t>(getpid()) << 40;
  std::vector<PullProbe> probes(static_cast<size_t>(n));
  probes[static_cast<size_t>(rank)] = {static_cast<uint64_t>(getpid()), reinterpret_cast<uintptr_t>(&word),
                                       word, wanted ? 1u : 0u};
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(probes.data(), sizeof(PullProbe)));
  std::vector<uint64_t> verdicts(static_cast<size_t>(n), 0);
  uint64_t& mine = verdicts[static_cast<size_t>(rank)];
  mine = wanted ? 1 : 0;
  for (int r = 0; r < n && mine; ++r) {
    const PullProbe& p = probes[static_cast<size_t>(r)];
    if (r == rank || !p.wants) continue;
    int err = 0;
    if (!probeCrossMemory(static_cast<pid_t>(p.pid), reinterpret_cast<const void*>(p.address), p.value,
                          &err)) {
      BRAID_INFO(
          "shared slots: no cross-memory reads of rank %d (process %d): %s; collectives copy through "
          "the slots",
          r, static_cast<int>(p.pid), err ? std::strerror(err) : "probe value mismatch");
      mine = 0;
    }
  }
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(verdicts.data(), sizeof(uint64_t)));
  *all = true;
  pids->assign(static_cast<size_t>(n), 0);
  for (int r = 0; r < n; ++r) {  // a rank that declines pulls gave verdict 0
    *all = *all && verdicts[static_cast<size_t>(r)] == 1;
    (*pids)[static_cast<size_t>(r)] = static_cast<pid_t>(probes[static_cast<size_t>(r)].pid);
  }
  return Status::ok();
}

}  // namespace

void HostSlots::allowPullsWithinThisProcess(PullWindow pulls) {
  pulls_ = pulls;
  pids_.assign(static_cast<size_t>(nranks_), getpid());
  peerRegions_ = std::make_unique<PeerRegions>("slots");
}

size_t HostSlots::areaBytes(int nranks, size_t slotBytes, size_t cellBytes) {
  const size_t n = static_cast<size_t>(nranks);
  const size_t cells = n * kCells * (kLine + roundUp(cellBytes, kLine));
  return kLine + n * kLine + cells + n * 2 * roundUp(slotBytes, kLine);
}

HostSlots::HostSlots(shm::Mapping mapping, int nranks, int rank, size_t slotBytes, size_t cellBytes)
    : mapping_(std::move(mapping)),
      nranks_(nranks),
      rank_(rank),
      slotBytes_(slotBytes),
      cellBytes_(cellBytes) {
  bind(static_cast<char*>(mapping_.get()));
}

HostSlots::HostSlots(std::shared_ptr<void> privateArea, int nranks, int rank, size_t slotBytes,
                     size_t cellBytes)
    : privateArea_(std::move(privateArea)),
      nranks_(nranks),
      rank_(rank),
      slotBytes_(slotBytes),
      cellBytes_(cellBytes) {
  bind(static_cast<char*>(privateArea_.get()));
}

void HostSlots::bind(char* base) {
  static_assert(sizeof(Control) == 16);
  static_assert((kCells & (kCells - 1)) == 0 && sizeof(Control) + kLineBytes == kLine);
  slotStride_ = roundUp(slotBytes_, kLine);
  cellStride_ = kLine + roundUp(cellBytes_, kLine);
  announcements_ = base + kLine;
  cells_ = announcements_ + static_cast<size_t>(nranks_) * kLine;
  slots_ = cells_ + static_cast<size_t>(nranks_) * kCells * cellStride_;
  seen_.assign(static_cast<size_t>(nranks_), 0);
}

std::shared_ptr<void> HostSlots::makePrivateArea(int nranks, size_t slotBytes, size_t cellBytes) {
  const size_t bytes = areaBytes(nranks, slotBytes, cellBytes);
  void* p = std::aligned_alloc(kLine, roundUp(bytes, kLine));
  if (!p) return nullptr;
  std::memset(p, 0, bytes);
  writeHeader(p, nranks, slotBytes, cellBytes);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

void HostSlots::prefetchMyData(uint32_t opNumber, Lane lane, size_t bytes) const {
  constexpr size_t kCacheLine = 64;
  if (lane == Lane::kLine || !sawEveryonePublish(reusableAfter(opNumber, lane))) return;
  char* data = myData(opNumber, lane);
  for (size_t at = 0; at < std::min(bytes, kPrefetchBytes); at += kCacheLine) prefetchForWrite(data + at);
}

void HostSlots::publish(uint32_t opNumber) const {
  Control* c = control(rank_, opNumber);
  // Both seq_cst, against the sleeper's seq_cst increment of `sleepers` then
  // load of `published`: either it sees this op, or this load sees it asleep.
  c->published.store(opNumber, std::memory_order_seq_cst);
  if (c->sleepers.load(std::memory_order_seq_cst) != 0) shm::futexWakeAll(&c->published);
}

void HostSlots::sleepUntilPublished(int r, uint32_t opNumber, int timeoutMs) const {
  Control* c = control(r, opNumber);
  c->sleepers.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t seen = c->published.load(std::memory_order_seq_cst);
  if (static_cast<int32_t>(seen - opNumber) < 0 && timeoutMs > 0)
    shm::futexWait(&c->published, seen, timeoutMs);
  c->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

Status HostSlots::establish(bootstrap::Bootstrap& bootstrap, size_t slotBytes, PullWindow pulls,
                            std::unique_ptr<HostSlots>* out) {
  out->reset();
  const int n = bootstrap.nranks(), rank = bootstrap.rank();
  std::vector<Offer> offers(static_cast<size_t>(n));
  std::memset(offers.data(), 0, offers.size() * sizeof(Offer));
  shm::Mapping mapping;
  if (rank == 0 && slotBytes > 0) {
    const int removed = shm::removeLeftoverSegments();
    if (removed > 0)
      BRAID_INFO("removed %d shared-memory segment(s) left in /dev/shm by dead processes", removed);
    std::string name;
    const size_t bytes = areaBytes(n, slotBytes, kCellBytes);
    Status made = shm::createNamedSegment(bytes, &name, &mapping);
    if (made.isOk() && name.size() < sizeof(offers[0].name)) {
      writeHeader(mapping.get(), n, slotBytes, kCellBytes);
      std::memcpy(offers[0].name, name.c_str(), name.size() + 1);
      offers[0].slotBytes = slotBytes;
      offers[0].areaBytes = bytes;
      offers[0].pullMinBlockBytes = pulls.minBlockBytes;
      offers[0].pullMaxOutputBytes = pulls.maxOutputBytes;
    } else {
      if (made.isOk()) shm::unlinkSegment(name);
      BRAID_INFO("small collectives go without shared slots: %s", made.message().c_str());
      mapping.reset();
    }
  }
  Status offered = bootstrap.allGather(offers.data(), sizeof(Offer));
  if (!offered.isOk() && rank == 0 && offers[0].slotBytes != 0) shm::unlinkSegment(offers[0].name);
  BRAID_RETURN_IF_ERROR(offered);
  Offer offer = offers[0];
  if (offer.slotBytes == 0) return Status::ok();
  offer.name[sizeof(offer.name) - 1] = '\0';
  const std::string name = offer.name;

  Status mine;
  if (offer.areaBytes != areaBytes(n, offer.slotBytes, kCellBytes))
    mine = remoteError("rank 0 offered a slot area of " + std::to_string(offer.areaBytes) +
                       " bytes, expected " + std::to_string(areaBytes(n, offer.slotBytes, kCellBytes)));
  else if (rank != 0 && slotBytes == 0)
    mine = notSupported("this rank declines shared slots (BRAID_TRANSPORT or BRAID_SHM_SLOT_BYTES=0)");
  else if (rank != 0)
    mine = shm::openNamedSegment(name, offer.areaBytes, &mapping);
  if (mine.isOk() && !headerMatches(mapping.get(), n, offer.slotBytes, kCellBytes))
    mine = remoteError("the slot area " + name + " does not describe this communicator");
  // Before anyone can start an op on it (everyone waits for this gather);
  // each rank from its own share of the pages.
  if (mine.isOk()) shm::writeEveryPage(mapping, rank, n);
  std::vector<uint64_t> mapped(static_cast<size_t>(n), 0);
  mapped[static_cast<size_t>(rank)] = mine.isOk() ? 1 : 0;
  Status gathered = bootstrap.allGather(mapped.data(), sizeof(uint64_t));
  if (rank == 0) shm::unlinkSegment(name);  // everyone who could map it has it mapped
  BRAID_RETURN_IF_ERROR(gathered);
  if (!mine.isOk()) BRAID_INFO("small collectives go without shared slots: %s", mine.message().c_str());
  for (int r = 0; r < n; ++r)
    if (mapped[static_cast<size_t>(r)] != 1) {
      BRAID_INFO("small collectives go without shared slots: rank %d could not map them", r);
      return Status::ok();
    }
  std::unique_ptr<HostSlots> slots(new HostSlots(std::move(mapping), n, rank, offer.slotBytes, kCellBytes));
  if (offer.pullMinBlockBytes > 0) {
    bool all = false;
    BRAID_RETURN_IF_ERROR(probePulls(bootstrap, pulls.on(), &all, &slots->pids_));
    if (all) {
      slots->pulls_ = {offer.pullMinBlockBytes, offer.pullMaxOutputBytes};
      slots->peerRegions_ = std::make_unique<PeerRegions>("slots");
    } else
      slots->pids_.clear();
  }
  *out = std::move(slots);
  return Status::ok();
}

}  // namespace braid::core
