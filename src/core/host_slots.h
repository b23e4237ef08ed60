// HostSlots: one shared-memory area for all ranks of a communicator that lives
// on a single host, where collectives run without the executor (small ones
// whole, larger all-reduces, reduces, all-gathers, reduce-scatters, broadcasts
// and all-to-alls in chunks: slot_collectives.h).
//
// Why: a small all-reduce through the executor is a schedule of sends and
// receives over per-pair rings, each with its frame header, doorbell and
// request bookkeeping; on one host that costs several times what the data
// does. Here every rank owns a slot: it copies its input into the slot and
// publishes the op's number, then reads the slots it needs straight from the
// others' memory and computes its own output (slot_collectives.h). One store
// to publish, one cache line per peer to see it: the same shape as Open MPI's
// coll/sm and UCC's tl/shm.
//
// Layout: a header line, one announcement line per rank (see announce()),
// then per rank kCells cells, then per rank two slots. Op k publishes in its
// rank's cell k % kCells: the cell's first line starts with the control words
// (the op number last published in it, a count of ranks sleeping on that
// word, the call's signature). Where an op's data goes is its lane: up to
// kLineBytes in the rest of that line, so a reader of a tiny input takes one
// cache miss per peer; up to cellBytes() in the cell's next lines, aligned
// for the reduction kernels; beyond, in the slot of the op's parity, k % 2.
//
// Reuse is safe without a second handshake: a rank publishes op k only after
// it has read everything of op k-1, so once every rank has published op j,
// nobody reads anything of op j-1 or earlier. Before writing op k's data a
// rank waits until every rank has published reusableAfter(k, lane)
// (slot_collectives.cc does that wait): op k-1 for a slot, last written in
// op k-2 at the latest; op k-(kCells-1) for a cell, last written in op
// k-kCells. So a rank that waits for nobody in small ops (a reduce's or a
// gather's non-root, a broadcast's or a scatter's root) runs up to
// kCells - 1 ops ahead of the ranks that read it, as an eager send does,
// instead of meeting them at every op.
//
// Setup (establish) is collective over the bootstrap: rank 0 creates a named
// segment, everyone maps it and writes each of its pages once (so that no op
// pays for a first touch: shm::writeEveryPage), rank 0 unlinks the name. If
// any rank cannot map it (another /dev/shm, no memory), every rank goes
// without: collectives then take the executor like everything else. Setup also probes whether every
// rank may read every other's memory with process_vm_readv (base/
// cross_memory.h); then collectives that fan nothing out may pull their
// blocks straight from the peers' buffers (pullBytes()).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/cpu.h"
#include "base/peer_regions.h"
#include "base/status.h"
#include "transports/shm/segment.h"

namespace braid::bootstrap {
class Bootstrap;
}

namespace braid::core {

class HostSlots {
 public:
  // Which calls may read their blocks straight from the peers' buffers
  // (slot_collectives.h says which collectives): blocks of at least
  // minBlockBytes in calls whose output is under maxOutputBytes.
  struct PullWindow {
    size_t minBlockBytes = 0;  // 0: no pulls
    size_t maxOutputBytes = SIZE_MAX;
    bool on() const { return minBlockBytes > 0; }
  };

  // Collective over every rank of `bootstrap`. Rank 0's slotBytes sets the
  // size for all; any rank passing 0 declines, and then nobody uses slots.
  // Likewise rank 0's pull window is everyone's, and any rank passing none,
  // or any pair of ranks whose kernel refuses cross-memory reads, turns
  // pulls off for all. *out stays null when the communicator goes without.
  // Fails only when the bootstrap itself fails.
  static Status establish(bootstrap::Bootstrap& bootstrap, size_t slotBytes, PullWindow pulls,
                          std::unique_ptr<HostSlots>* out);

  // For tests: an area for `nranks` in this process's memory, each "rank" a
  // HostSlots view of it.
  static std::shared_ptr<void> makePrivateArea(int nranks, size_t slotBytes, size_t cellBytes = kCellBytes);
  HostSlots(std::shared_ptr<void> privateArea, int nranks, int rank, size_t slotBytes,
            size_t cellBytes = kCellBytes);

  // Cells per rank: how far a rank may run ahead in small ops (see above).
  // A power of two, so that op numbers map to cells alike across their wrap.
  // With 4 ranks on 2 cores, 8 B to 4 KiB reduces, broadcasts, gathers and
  // scatters took 1.6-2x longer with 16 cells than with 64, and 1.0-1.3x
  // longer with 64 than with 256 (which take 1 MiB of cells a rank).
  static constexpr uint32_t kCells = 64;
  // Data bytes of a cell in the communicators' areas: Open MPI's
  // shared-memory eager limit (btl_vader_eager_limit), past which its sends
  // wait for their receivers too.
  static constexpr size_t kCellBytes = 4096;

  int nranks() const { return nranks_; }
  int rank() const { return rank_; }
  size_t slotBytes() const { return slotBytes_; }
  size_t cellBytes() const { return cellBytes_; }

  // Where an op keeps its data: in its cell's control line (up to
  // kLineBytes), in its cell's other lines (up to cellBytes()) or in a slot.
  enum class Lane : uint8_t { kLine, kCell, kSlot };
  static constexpr size_t kLineBytes = 48;
  // The op every rank must have published before this rank writes op
  // `opNumber`'s data in `lane` (the layout above says why).
  static uint32_t reusableAfter(uint32_t opNumber, Lane lane) {
    return opNumber - (lane == Lane::kSlot ? 1 : kCells - 1);
  }

  // Where a call may read a peer's buffer with readProcessMemory(pidOf(peer),
  // ...); the same on every rank.
  PullWindow pulls() const { return pulls_; }
  pid_t pidOf(int r) const { return pids_[static_cast<size_t>(r)]; }
  // The peers' braidMemAlloc regions this rank maps, where a pull reads them
  // with plain loads; null when pulls are off. The communicator's turn owns
  // it, as it owns this view.
  PeerRegions* peerRegions() const { return peerRegions_.get(); }
  // For tests: every "rank" of a private area is this process, which may
  // always read itself.
  void allowPullsWithinThisProcess(PullWindow pulls);

  // Where this rank writes op `opNumber`'s data in either lane, and the
  // signature in its cell (a description of the call, compared by readers to
  // catch ranks that called different collectives).
  char* mySlot(uint32_t opNumber) const { return slot(rank_, opNumber); }
  char* myData(uint32_t opNumber, Lane lane) const { return data(rank_, opNumber, lane); }
  void setMySignature(uint32_t opNumber, uint64_t signature) const {
    control(rank_, opNumber)->signature.store(signature, std::memory_order_relaxed);  // publish() releases it
  }
  // Marks this rank's published op `opNumber` as failed here, so that a peer
  // still to check its signatures fails the op too instead of completing it
  // with inputs from ranks that gave up on it. Only for an op this rank
  // published (so every rank is past the slot's previous use).
  void markMyOpFailed(uint32_t opNumber) const {
    control(rank_, opNumber)->signature.store(kFailedSignature, std::memory_order_release);
  }
  // A signature no call has (its collective byte is not a collective).
  static constexpr uint64_t kFailedSignature = ~uint64_t{0};
  // Makes this rank's op `opNumber` (its data in either lane) visible and
  // wakes sleepers.
  void publish(uint32_t opNumber) const;
  // Starts moving this rank's cell of op `opNumber` (its control words and
  // first data) into this core's cache for writing. Only once every rank is
  // past that cell's last use: then the transfer overlaps whatever this rank
  // does before its next op instead of delaying that op's publish.
  void prefetchMyCell(uint32_t opNumber) const { prefetchForWrite(control(rank_, opNumber)); }
  // The same for the first `bytes` (at most kPrefetchBytes) of op
  // `opNumber`'s data in a cell or slot, once every rank is past their last
  // use (nothing for the line lane: its data is in the cell's first line).
  void prefetchMyData(uint32_t opNumber, Lane lane, size_t bytes) const;
  static constexpr size_t kPrefetchBytes = 1024;

  // Whether rank r has published op `opNumber` (or a later one). Answered
  // from what this rank saw of r before when that is enough, so that a check
  // of an op long published (whether a cell may be reused) does not pull the
  // peer's line across.
  bool hasPublished(int r, uint32_t opNumber) const {
    uint32_t& seen = seen_[static_cast<size_t>(r)];
    if (static_cast<int32_t>(seen - opNumber) >= 0) return true;
    const uint32_t published = control(r, opNumber)->published.load(std::memory_order_acquire);
    if (static_cast<int32_t>(published - opNumber) < 0) return false;
    seen = published;  // r publishes in order: everything up to here is out
    return true;
  }
  // Whether this rank already saw every other rank publish op `opNumber`,
  // without looking again.
  bool sawEveryonePublish(uint32_t opNumber) const {
    for (int r = 0; r < nranks_; ++r)
      if (r != rank_ && static_cast<int32_t>(seen_[static_cast<size_t>(r)] - opNumber) < 0) return false;
    return true;
  }
  // Sleeps until rank r publishes op `opNumber`, at most timeoutMs (a
  // spurious early return is allowed: callers re-check).
  void sleepUntilPublished(int r, uint32_t opNumber, int timeoutMs) const;

  // Rank r's data and signature for op `opNumber` (read only after
  // hasPublished(r, opNumber) said yes).
  char* slot(int r, uint32_t opNumber) const {
    return slots_ + (static_cast<size_t>(r) * 2 + (opNumber & 1)) * slotStride_;
  }
  char* line(int r, uint32_t opNumber) const {
    return reinterpret_cast<char*>(control(r, opNumber)) + sizeof(Control);
  }
  char* cell(int r, uint32_t opNumber) const { return reinterpret_cast<char*>(control(r, opNumber)) + kLine; }
  char* data(int r, uint32_t opNumber, Lane lane) const {
    return lane == Lane::kLine   ? line(r, opNumber)
           : lane == Lane::kCell ? cell(r, opNumber)
                                 : slot(r, opNumber);
  }
  uint64_t signatureOf(int r, uint32_t opNumber) const {
    return control(r, opNumber)->signature.load(std::memory_order_acquire);
  }

  // Every op of the communicator, on the slots or not, says here which op it
  // is (its ticket, the same on every rank for the same call) and what it is
  // (its signature and element count). A rank waiting on the slots for a
  // peer that is in a different call at the same ticket (an op the executor
  // runs, which the slots never see) learns so at once instead of at its
  // deadline, and can say what the peer called.
  void announce(uint64_t ticket, uint64_t signature, uint64_t count) const {
    Announcement& a = announcement(rank_);
    a.signature.store(signature, std::memory_order_relaxed);
    a.count.store(count, std::memory_order_relaxed);
    a.word.store(packAnnouncement(ticket, signature), std::memory_order_release);  // releases the two above
  }
  // What rank r announced, when that is a different call than `signature`
  // for `ticket`.
  struct OtherCall {
    bool known = false;  // false: the peer moved on while this was read; only the mismatch is certain
    uint64_t signature = 0;
    uint64_t count = 0;
  };
  bool announcedOther(int r, uint64_t ticket, uint64_t signature, OtherCall* theirs) const {
    const Announcement& a = announcement(r);
    const uint64_t word = a.word.load(std::memory_order_acquire);
    const uint64_t mine = packAnnouncement(ticket, signature);
    if (word >> 32 != mine >> 32 || word == mine) return false;
    // The peer writes its next call's signature and count before that call's
    // word: read after this word, they are this call's unless the word
    // changed meanwhile or the signature does not give the word's digest.
    theirs->signature = a.signature.load(std::memory_order_acquire);
    theirs->count = a.count.load(std::memory_order_acquire);
    theirs->known =
        a.word.load(std::memory_order_acquire) == word && packAnnouncement(ticket, theirs->signature) == word;
    return true;
  }
  // A ticket and a 32-bit digest of the signature in one word, so a reader
  // compares a whole announcement with one load. The ticket part is never 0,
  // so a rank that announced nothing yet (a zeroed word) matches no ticket.
  static uint64_t packAnnouncement(uint64_t ticket, uint64_t signature) {
    return (ticket % 0xffffffffu + 1) << 32 | ((signature ^ signature >> 32) & 0xffffffffu);
  }

  // Bytes of the whole area for nranks ranks, slotBytes per slot and
  // cellBytes per cell.
  static size_t areaBytes(int nranks, size_t slotBytes, size_t cellBytes);

 private:
  // The head of a cell; a small op's data follows it.
  struct Control {
    std::atomic<uint32_t> published;  // the last op number published in this slot; also the futex word
    std::atomic<uint32_t> sleepers;   // ranks sleeping on `published`
    std::atomic<uint64_t> signature;  // of the call published last (kFailedSignature: failed there)
  };
  static constexpr size_t kLine = 64;
  HostSlots(shm::Mapping mapping, int nranks, int rank, size_t slotBytes, size_t cellBytes);
  void bind(char* base);
  // A rank's line of the announcements (announce()).
  struct Announcement {
    std::atomic<uint64_t> word;  // packAnnouncement(ticket, signature)
    std::atomic<uint64_t> signature;
    std::atomic<uint64_t> count;
  };
  Announcement& announcement(int r) const {
    static_assert(sizeof(Announcement) <= kLine);
    return *reinterpret_cast<Announcement*>(announcements_ + static_cast<size_t>(r) * kLine);
  }
  Control* control(int r, uint32_t opNumber) const {
    return reinterpret_cast<Control*>(cells_ +
                                      (static_cast<size_t>(r) * kCells + opNumber % kCells) * cellStride_);
  }

  shm::Mapping mapping_;
  std::shared_ptr<void> privateArea_;
  int nranks_, rank_;
  size_t slotBytes_, cellBytes_;
  PullWindow pulls_{0, 0};
  std::vector<pid_t> pids_;  // every rank's, when pulls are on
  std::unique_ptr<PeerRegions> peerRegions_;
  // The last op this rank saw each rank publish (hasPublished()): private to
  // this rank's view, which one thread at a time uses (the communicator's
  // turn).
  mutable std::vector<uint32_t> seen_;
  size_t slotStride_ = 0;          // a slot's data, cache-line aligned
  size_t cellStride_ = 0;          // a cell's control line plus its data, cache-line aligned
  char* announcements_ = nullptr;  // one cache line per rank
  char* cells_ = nullptr;
  char* slots_ = nullptr;
};

}  // namespace braid::core
