#include "case_run.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace braid::itest {
namespace {

Bytes junk(size_t bytes, uint64_t seed) {
  Bytes b(bytes);
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t r = mix(seed + i);
    memcpy(&b[i], &r, std::min<size_t>(8, bytes - i));
  }
  return b;
}

// All-to-all-v: elements rank p sends to rank q. Uneven, and zero for some
// pairs whenever count >= 2.
size_t vcount(size_t count, int p, int q) { return count * static_cast<size_t>((p + 2 * q + 1) % 4) / 2; }

}  // namespace

GuardedBuffer::GuardedBuffer(size_t bytes, uint64_t junkSeed)
    : storage_(junk(bytes + 2 * kGuard, junkSeed)) {}

CaseRun::CaseRun(const Case& c, int rank, int nranks, void* shared)
    : c_(c), me_(rank), n_(nranks), es_(typeSize(c.type)), shared_(shared) {
  const uint64_t junkSeed = mix(c.seed ^ (0x6a756e6bull + static_cast<uint64_t>(rank)));
  const size_t cnt = c.count;
  switch (c.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
    case Coll::kReduceScatter:
      setupReduction();
      break;
    case Coll::kAllToAllv:
      setupAllToAllv();
      break;
    case Coll::kBarrier:
      break;
    case Coll::kRing:
    case Coll::kGroupRing: {
      send_ = GuardedBuffer(cnt * es_, junkSeed + 1);
      tile(send_.data(), cnt, es_, own(movePattern(es_, me_, 0, c.seed)));
      recv_ = GuardedBuffer(cnt * es_, junkSeed + 2);
      expect(0, cnt, own(movePattern(es_, (me_ + n_ - 1) % n_, 0, c.seed)));
      break;
    }
    default:
      setupBlocks();
      break;
  }
  if (!recvPtr_ && !recv_.empty()) recvPtr_ = recv_.data();
  if (!sendPtr_ && !send_.empty()) sendPtr_ = send_.data();
  sendInit_ = send_.storage();
  recvInit_ = recv_.storage();
}

const Bytes& CaseRun::own(Bytes b) {
  patterns_.push_back(std::move(b));
  return patterns_.back();
}

void CaseRun::expect(size_t offset, size_t count, const Bytes& pattern) {
  regions_.push_back({offset, count, &pattern});
}

void CaseRun::setupReduction() {
  const size_t cnt = c_.count;
  const uint64_t js = mix(c_.seed ^ (0x72656475ull + static_cast<uint64_t>(me_)));
  const bool scatter = c_.coll == Coll::kReduceScatter;
  const int blocks = scatter ? n_ : 1;
  GuardedBuffer& in = c_.inPlace ? recv_ : send_;
  in = GuardedBuffer(blocks * cnt * es_, js);
  for (int b = 0; b < blocks; ++b)
    tile(in.data() + b * cnt * es_, cnt, es_, own(reduceInput(c_.type, c_.op, n_, me_, b, c_.seed)));
  if (!c_.inPlace) recv_ = GuardedBuffer(cnt * es_, js + 1);
  const bool gets = c_.coll != Coll::kReduce || me_ == c_.root;
  const size_t at = scatter && c_.inPlace ? me_ * cnt : 0;
  if (c_.inPlace) {
    sendPtr_ = recv_.data();
    recvPtr_ = recv_.data() + at * es_;
  }
  if (gets) expect(at, cnt, own(reduceExpected(c_.type, c_.op, n_, scatter ? me_ : 0, c_.seed)));
  // In-place reduce-scatter: the header promises nothing about the other blocks.
  if (scatter && c_.inPlace)
    for (int b = 0; b < n_; ++b)
      if (b != me_) regions_.push_back({b * cnt, cnt, nullptr});
}

// Broadcast, all-gather, gather, scatter, all-to-all, group all-to-all: data
// movement only.
void CaseRun::setupBlocks() {
  const size_t cnt = c_.count;
  const uint64_t js = mix(c_.seed ^ (0x626c6bull + static_cast<uint64_t>(me_)));
  const bool inPlace = c_.inPlace;
  switch (c_.coll) {
    case Coll::kBroadcast: {
      const Bytes& data = own(movePattern(es_, c_.root, 0, c_.seed));
      recv_ = GuardedBuffer(cnt * es_, js);
      if (!inPlace) send_ = GuardedBuffer(cnt * es_, js + 1);  // non-root: must stay as is
      if (me_ == c_.root) tile(inPlace ? recv_.data() : send_.data(), cnt, es_, data);
      if (inPlace) sendPtr_ = recv_.data();
      expect(0, cnt, data);
      break;
    }
    case Coll::kAllGather: {
      recv_ = GuardedBuffer(n_ * cnt * es_, js);
      const Bytes& mine = own(movePattern(es_, me_, 0, c_.seed));
      if (inPlace) {
        sendPtr_ = recv_.data() + me_ * cnt * es_;
        tile(recv_.data() + me_ * cnt * es_, cnt, es_, mine);
      } else {
        send_ = GuardedBuffer(cnt * es_, js + 1);
        tile(send_.data(), cnt, es_, mine);
      }
      for (int p = 0; p < n_; ++p)
        expect(p * cnt, cnt, p == me_ ? mine : own(movePattern(es_, p, 0, c_.seed)));
      break;
    }
    case Coll::kGather: {  // off the root: no output, passed NULL in the in-place cases
      const Bytes& mine = own(movePattern(es_, me_, 0, c_.seed));
      const bool root = me_ == c_.root;
      if (root) recv_ = GuardedBuffer(n_ * cnt * es_, js);
      if (!root && !inPlace) recv_ = GuardedBuffer(n_ * cnt * es_, js);  // must stay as it is
      if (root && inPlace) {
        sendPtr_ = recv_.data() + me_ * cnt * es_;
        tile(recv_.data() + me_ * cnt * es_, cnt, es_, mine);
      } else {
        send_ = GuardedBuffer(cnt * es_, js + 1);
        tile(send_.data(), cnt, es_, mine);
      }
      if (root)
        for (int p = 0; p < n_; ++p)
          expect(p * cnt, cnt, p == me_ ? mine : own(movePattern(es_, p, 0, c_.seed)));
      break;
    }
    case Coll::kScatter: {  // off the root: no input, passed NULL in the in-place cases
      const bool root = me_ == c_.root;
      if (root) {
        GuardedBuffer& in = inPlace ? recv_ : send_;
        in = GuardedBuffer(n_ * cnt * es_, js);
        for (int q = 0; q < n_; ++q)
          tile(in.data() + q * cnt * es_, cnt, es_, own(movePattern(es_, me_, q, c_.seed)));
      }
      if (root && inPlace) {
        // The input stays as it was around the own block, which is the output.
        sendPtr_ = recv_.data();
        recvPtr_ = recv_.data() + me_ * cnt * es_;
        for (int q = 0; q < n_; ++q) expect(q * cnt, cnt, own(movePattern(es_, me_, q, c_.seed)));
        break;
      }
      if (!root && !inPlace) send_ = GuardedBuffer(n_ * cnt * es_, js + 1);  // must stay as it is
      recv_ = GuardedBuffer(cnt * es_, js + 2);
      expect(0, cnt, own(movePattern(es_, c_.root, me_, c_.seed)));
      break;
    }
    default: {  // all-to-all and the group all-to-all: block q goes to rank q
      GuardedBuffer& in = inPlace ? recv_ : send_;
      in = GuardedBuffer(n_ * cnt * es_, js);
      for (int q = 0; q < n_; ++q)
        tile(in.data() + q * cnt * es_, cnt, es_, own(movePattern(es_, me_, q, c_.seed)));
      if (!inPlace) recv_ = GuardedBuffer(n_ * cnt * es_, js + 1);
      if (inPlace) sendPtr_ = recv_.data();
      for (int p = 0; p < n_; ++p) expect(p * cnt, cnt, own(movePattern(es_, p, me_, c_.seed)));
      break;
    }
  }
}

// Send blocks in peer order with a one-element gap before odd peers; receive
// blocks in reverse peer order with a gap before each, so that a wrong
// displacement or count lands on bytes that must stay untouched.
void CaseRun::setupAllToAllv() {
  const size_t cnt = c_.count;
  const uint64_t js = mix(c_.seed ^ (0x76ull + static_cast<uint64_t>(me_)));
  size_t off = 0;
  for (int q = 0; q < n_; ++q) {
    off += q % 2;
    sendDispls_.push_back(off);
    sendCounts_.push_back(vcount(cnt, me_, q));
    off += sendCounts_.back();
  }
  send_ = GuardedBuffer((off + 1) * es_, js);
  for (int q = 0; q < n_; ++q)
    tile(send_.data() + sendDispls_[q] * es_, sendCounts_[q], es_, own(movePattern(es_, me_, q, c_.seed)));
  recvCounts_.assign(n_, 0);
  recvDispls_.assign(n_, 0);
  off = 0;
  for (int p = n_ - 1; p >= 0; --p) {
    off += 1;
    recvDispls_[p] = off;
    recvCounts_[p] = vcount(cnt, p, me_);
    off += recvCounts_[p];
  }
  recv_ = GuardedBuffer((off + 1) * es_, js + 1);
  for (int p = 0; p < n_; ++p) expect(recvDispls_[p], recvCounts_[p], own(movePattern(es_, p, me_, c_.seed)));
}

CaseRun::~CaseRun() {
  releaseMirror(mirrorSend_);
  releaseMirror(mirrorRecv_);
}

bool CaseRun::shareableHere() const { return me_ < 64 && ((c_.shareableRanks >> me_) & 1) != 0; }

void* CaseRun::allocMirror(size_t bytes) const {
  if (device_) return device_->alloc(bytes);
  void* p = nullptr;
  if (braidMemAlloc(&p, bytes ? bytes : 1) != braidSuccess) {
    std::fprintf(stderr, "braidMemAlloc of %zu bytes: %s\n", bytes, braidGetLastError(nullptr));
    std::abort();
  }
  return p;
}

void CaseRun::copyMirror(void* dst, const void* src, size_t bytes) const {
  if (device_)
    device_->copy(dst, src, bytes);
  else if (bytes)
    std::memcpy(dst, src, bytes);
}

void CaseRun::releaseMirror(void* p) const {
  if (p == nullptr) return;
  if (device_)
    device_->release(p);
  else
    (void)braidMemFree(p);
}

void* CaseRun::onMirror(const void* p) const {
  auto inside = [p](const GuardedBuffer& b) {
    const uint8_t* start = b.storage().data();
    return !b.empty() && p >= start && p <= start + b.storage().size();
  };
  const auto* at = static_cast<const uint8_t*>(p);
  if (p && inside(send_)) return static_cast<uint8_t*>(mirrorSend_) + (at - send_.storage().data());
  if (p && inside(recv_)) return static_cast<uint8_t*>(mirrorRecv_) + (at - recv_.storage().data());
  return const_cast<void*>(p);
}

braidResult_t CaseRun::launch(braidComm_t comm, braidStream_t s, std::string* call) {
  if (!device_ && !shareableHere()) return launchHost(comm, s, call);
  if (!send_.empty() && !mirrorSend_) {
    mirrorSend_ = allocMirror(send_.storage().size());
    copyMirror(mirrorSend_, send_.storage().data(), send_.storage().size());
  }
  if (!recv_.empty() && !mirrorRecv_) {
    mirrorRecv_ = allocMirror(recv_.storage().size());
    copyMirror(mirrorRecv_, recv_.storage().data(), recv_.storage().size());
  }
  // The same calls with the pointers moved into the mirrors.
  const void* hostSend = sendPtr_;
  void* hostRecv = recvPtr_;
  sendPtr_ = onMirror(hostSend);
  recvPtr_ = onMirror(hostRecv);
  braidResult_t r = launchHost(comm, s, call);
  sendPtr_ = hostSend;
  recvPtr_ = hostRecv;
  return r;
}

void CaseRun::collect() {
  if (mirrorSend_) copyMirror(send_.storage().data(), mirrorSend_, send_.storage().size());
  if (mirrorRecv_) copyMirror(recv_.storage().data(), mirrorRecv_, recv_.storage().size());
}

braidResult_t CaseRun::launchHost(braidComm_t comm, braidStream_t s, std::string* call) {
  if (c_.op != kPreMulSum) return launchCalls(comm, s, c_.op, call);
  // A PreMulSum made for this call alone and destroyed as soon as it is
  // issued: a queued call keeps the scalar it was issued with.
  braidRedOp_t op;
  Bytes scalar = preMulScalar(c_.type, me_);
  if (braidResult_t r =
          braidRedOpCreatePreMulSum(&op, scalar.data(), c_.type, braidScalarHostImmediate, comm);
      r != braidSuccess) {
    *call = "braidRedOpCreatePreMulSum";
    return r;
  }
  const braidResult_t r = launchCalls(comm, s, op, call);
  if (braidResult_t d = braidRedOpDestroy(op, comm); d != braidSuccess && r == braidSuccess) {
    *call = "braidRedOpDestroy";
    return d;
  }
  return r;
}

braidResult_t CaseRun::launchCalls(braidComm_t comm, braidStream_t s, braidRedOp_t op, std::string* call) {
  const size_t cnt = c_.count;
  const braidDataType_t t = c_.type;
  switch (c_.coll) {
    case Coll::kAllReduce:
      *call = "braidAllReduce";
      return braidAllReduce(sendPtr_, recvPtr_, cnt, t, op, comm, s);
    case Coll::kBroadcast:
      *call = "braidBroadcast";
      return braidBroadcast(sendPtr_, recvPtr_, cnt, t, c_.root, comm, s);
    case Coll::kReduce:
      *call = "braidReduce";
      return braidReduce(sendPtr_, recvPtr_, cnt, t, op, c_.root, comm, s);
    case Coll::kAllGather:
      *call = "braidAllGather";
      return braidAllGather(sendPtr_, recvPtr_, cnt, t, comm, s);
    case Coll::kReduceScatter:
      *call = "braidReduceScatter";
      return braidReduceScatter(sendPtr_, recvPtr_, cnt, t, op, comm, s);
    case Coll::kAllToAll:
      *call = "braidAllToAll";
      return braidAllToAll(sendPtr_, recvPtr_, cnt, t, comm, s);
    case Coll::kGather:
      *call = "braidGather";
      return braidGather(sendPtr_, recvPtr_, cnt, t, c_.root, comm, s);
    case Coll::kScatter:
      *call = "braidScatter";
      return braidScatter(sendPtr_, recvPtr_, cnt, t, c_.root, comm, s);
    case Coll::kAllToAllv:
      *call = "braidAllToAllv";
      return braidAllToAllv(sendPtr_, sendCounts_.data(), sendDispls_.data(), recvPtr_, recvCounts_.data(),
                            recvDispls_.data(), t, comm, s);
    case Coll::kRing: {
      const int next = (me_ + 1) % n_, prev = (me_ + n_ - 1) % n_;
      for (int step = 0; step < 2; ++step) {
        const bool sending = (step == 0) == (me_ % 2 == 0);  // even ranks send first
        *call = sending ? "braidSend" : "braidRecv";
        braidResult_t r =
            sending ? braidSend(sendPtr_, cnt, t, next, comm, s) : braidRecv(recvPtr_, cnt, t, prev, comm, s);
        if (r != braidSuccess) return r;
      }
      return braidSuccess;
    }
    case Coll::kBarrier:
      *call = "braidBarrier";
      static_cast<std::atomic<int>*>(shared_)->fetch_add(1);
      return braidBarrier(comm, s);
    default:
      return launchGroup(comm, s, call);
  }
}

braidResult_t CaseRun::launchGroup(braidComm_t comm, braidStream_t s, std::string* call) {
  const size_t cnt = c_.count;
  const braidDataType_t t = c_.type;
  *call = "braidGroupStart";
  braidResult_t first = braidGroupStart();
  if (first != braidSuccess) return first;
  auto note = [&](braidResult_t r, const char* name) {
    if (r != braidSuccess && first == braidSuccess) {
      first = r;
      *call = name;
    }
  };
  const auto* src = static_cast<const uint8_t*>(sendPtr_);
  auto* dst = static_cast<uint8_t*>(recvPtr_);
  if (c_.coll == Coll::kGroupRing) {
    note(braidSend(src, cnt, t, (me_ + 1) % n_, comm, s), "braidSend");
    note(braidRecv(dst, cnt, t, (me_ + n_ - 1) % n_, comm, s), "braidRecv");
  } else {
    for (int q = 0; q < n_; ++q) note(braidSend(src + q * cnt * es_, cnt, t, q, comm, s), "braidSend");
    for (int p = 0; p < n_; ++p) note(braidRecv(dst + p * cnt * es_, cnt, t, p, comm, s), "braidRecv");
  }
  note(braidGroupEnd(), "braidGroupEnd");  // always closes the group, even after an error
  return first;
}

bool CaseRun::verify(std::string* error) {
  std::ostringstream out;
  if (c_.coll == Coll::kBarrier) {
    int seen = static_cast<std::atomic<int>*>(shared_)->load();
    if (seen >= n_ * (c_.barrierRound + 1)) return true;
    out << describe(c_) << " rank " << me_ << ": left the barrier when only " << seen << " of "
        << n_ * (c_.barrierRound + 1) << " arrivals had happened";
    *error = out.str();
    return false;
  }
  const size_t g = GuardedBuffer::kGuard;
  if (!send_.empty() && send_.storage() != sendInit_) {  // in-place ops have no send_
    const Bytes& now = send_.storage();
    size_t i = std::mismatch(now.begin(), now.end(), sendInit_.begin()).first - now.begin();
    out << describe(c_) << " rank " << me_ << ": the send buffer changed at byte "
        << static_cast<long long>(i) - static_cast<long long>(g) << " (relative to its start)";
    *error = out.str();
    return false;
  }
  std::vector<Region> rs = regions_;
  std::sort(rs.begin(), rs.end(), [](const Region& a, const Region& b) { return a.offset < b.offset; });
  const Bytes& now = recv_.storage();
  size_t pos = 0;  // byte offset in storage up to which everything was checked
  auto untouched = [&](size_t end) {
    if (end > pos && memcmp(now.data() + pos, recvInit_.data() + pos, end - pos) != 0) {
      size_t i =
          std::mismatch(now.begin() + pos, now.begin() + end, recvInit_.begin() + pos).first - now.begin();
      out << describe(c_) << " rank " << me_ << ": recv byte "
          << static_cast<long long>(i) - static_cast<long long>(g)
          << " (relative to its start) was written, but lies outside the result";
      return false;
    }
    return true;
  };
  for (const Region& r : rs) {
    if (!untouched(g + r.offset * es_)) break;
    pos = g + (r.offset + r.count) * es_;
    if (!r.pattern) continue;
    const uint8_t* at = now.data() + g + r.offset * es_;
    long long bad = firstMismatch(at, r.count, es_, *r.pattern);
    if (bad >= 0) {
      out << describe(c_) << " rank " << me_ << ": recv element " << r.offset + bad << " is "
          << hexElem(at + bad * es_, es_) << ", expected "
          << hexElem(&(*r.pattern)[(bad % kPeriod) * es_], es_);
      break;
    }
  }
  if (out.tellp() == 0) untouched(now.size());
  *error = out.str();
  return error->empty();
}

}  // namespace braid::itest
