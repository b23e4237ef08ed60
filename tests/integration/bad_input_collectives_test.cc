// Bad input to every entry that takes a communicator, in a 2-rank
// communicator. Every bad call must return the expected code with a message
// naming the argument, leave every buffer (and the count arrays) untouched, and
// leave the communicator working: a correct all-reduce follows each one.
//
// A call that is wrong only on some ranks (a NULL sendbuff is fine on a
// broadcast's non-root) is made only on those ranks, so that no rank starts a
// collective its peers never join.
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "checks.h"
#include "harness.h"

namespace braid::itest {
namespace {

constexpr int kRanks = 2;
constexpr size_t kCount = 16;  // int32 elements in the valid arguments
constexpr size_t kArena = 4096;
const auto kBadType = static_cast<braidDataType_t>(99);
const auto kBadOp = static_cast<braidRedOp_t>(99);

struct BadCall {
  std::string what;
  std::string names;  // what the message must name ('|' between alternatives)
  std::function<braidResult_t()> call;
  std::function<bool(int rank)> onRank = [](int) { return true; };
  braidResult_t want = braidInvalidArgument;
  braidResult_t alsoOk = braidSuccess;  // a second acceptable code; Success: none
};

// A correct all-reduce on every rank, checked: the communicator still works.
// False (after reporting) when it does not, and the ranks are out of step.
bool expectAllReduceWorks(braidComm_t comm, int rank, const std::string& after) {
  int32_t in[kCount], out[kCount];
  for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<int32_t>(i * 10 + rank);
  braidResult_t r = braidAllReduce(in, out, kCount, braidInt32, braidSum, comm, nullptr);
  EXPECT_EQ(r, braidSuccess) << "all-reduce after " << after << ": " << braidGetLastError(comm);
  if (r != braidSuccess) return false;
  for (size_t i = 0; i < kCount; ++i)
    EXPECT_EQ(out[i], static_cast<int32_t>(kRanks * i * 10 + 1)) << "after " << after << ", element " << i;
  return true;
}

std::vector<BadCall> badCalls(braidComm_t comm, int rank, uint8_t* arena, size_t* vc, size_t* vd) {
  using std::string;
  uint8_t* s = arena;         // a valid send buffer (int32 x kCount x kRanks fits)
  uint8_t* d = arena + 2048;  // a valid recv buffer
  const size_t e = sizeof(int32_t);
  const auto root0 = [](int r) { return r == 0; };
  std::vector<BadCall> v;
  auto add = [&](string what, string names, std::function<braidResult_t()> f) {
    v.push_back({std::move(what), std::move(names), std::move(f)});
  };
  // All-reduce.
  add("AllReduce sendbuff NULL", "sendbuff",
      [=] { return braidAllReduce(nullptr, d, kCount, braidInt32, braidSum, comm, nullptr); });
  add("AllReduce recvbuff NULL", "recvbuff",
      [=] { return braidAllReduce(s, nullptr, kCount, braidInt32, braidSum, comm, nullptr); });
  add("AllReduce count SIZE_MAX", "count",
      [=] { return braidAllReduce(s, d, SIZE_MAX, braidInt32, braidSum, comm, nullptr); });
  add("AllReduce count*8 overflows", "count",
      [=] { return braidAllReduce(s, d, SIZE_MAX / 4, braidFloat64, braidSum, comm, nullptr); });
  add("AllReduce datatype 99", "datatype",
      [=] { return braidAllReduce(s, d, kCount, kBadType, braidSum, comm, nullptr); });
  add("AllReduce datatype -1", "datatype", [=] {
    return braidAllReduce(s, d, kCount, static_cast<braidDataType_t>(-1), braidSum, comm, nullptr);
  });
  add("AllReduce datatype NumTypes", "datatype",
      [=] { return braidAllReduce(s, d, kCount, braidNumTypes, braidSum, comm, nullptr); });
  add("AllReduce op 99", "op",
      [=] { return braidAllReduce(s, d, kCount, braidInt32, kBadOp, comm, nullptr); });
  add("AllReduce op -1", "op",
      [=] { return braidAllReduce(s, d, kCount, braidInt32, static_cast<braidRedOp_t>(-1), comm, nullptr); });
  add("AllReduce op NumOps", "op",
      [=] { return braidAllReduce(s, d, kCount, braidInt32, braidNumOps, comm, nullptr); });
  add("AllReduce overlapping buffers", "sendbuff|recvbuff",
      [=] { return braidAllReduce(s, s + e, kCount, braidInt32, braidSum, comm, nullptr); });
  // Broadcast (root 0): sendbuff matters on the root only.
  v.push_back({"Broadcast sendbuff NULL on the root", "sendbuff",
               [=] { return braidBroadcast(nullptr, d, kCount, braidInt32, 0, comm, nullptr); }, root0});
  add("Broadcast recvbuff NULL", "recvbuff",
      [=] { return braidBroadcast(s, nullptr, kCount, braidInt32, 0, comm, nullptr); });
  add("Broadcast root -1", "root",
      [=] { return braidBroadcast(s, d, kCount, braidInt32, -1, comm, nullptr); });
  add("Broadcast root nranks", "root",
      [=] { return braidBroadcast(s, d, kCount, braidInt32, kRanks, comm, nullptr); });
  add("Broadcast count SIZE_MAX", "count",
      [=] { return braidBroadcast(s, d, SIZE_MAX, braidInt32, 0, comm, nullptr); });
  add("Broadcast datatype 99", "datatype",
      [=] { return braidBroadcast(s, d, kCount, kBadType, 0, comm, nullptr); });
  v.push_back({"Broadcast overlapping buffers on the root", "sendbuff|recvbuff",
               [=] { return braidBroadcast(s, s + e, kCount, braidInt32, 0, comm, nullptr); }, root0});
  // Reduce (root 0): recvbuff matters on the root only.
  add("Reduce sendbuff NULL", "sendbuff",
      [=] { return braidReduce(nullptr, d, kCount, braidInt32, braidSum, 0, comm, nullptr); });
  v.push_back({"Reduce recvbuff NULL on the root", "recvbuff",
               [=] { return braidReduce(s, nullptr, kCount, braidInt32, braidSum, 0, comm, nullptr); },
               root0});
  add("Reduce root -1", "root",
      [=] { return braidReduce(s, d, kCount, braidInt32, braidSum, -1, comm, nullptr); });
  add("Reduce root nranks", "root",
      [=] { return braidReduce(s, d, kCount, braidInt32, braidSum, kRanks, comm, nullptr); });
  add("Reduce count SIZE_MAX", "count",
      [=] { return braidReduce(s, d, SIZE_MAX, braidInt32, braidSum, 0, comm, nullptr); });
  add("Reduce datatype 99", "datatype",
      [=] { return braidReduce(s, d, kCount, kBadType, braidSum, 0, comm, nullptr); });
  add("Reduce op 99", "op", [=] { return braidReduce(s, d, kCount, braidInt32, kBadOp, 0, comm, nullptr); });
  v.push_back({"Reduce overlapping buffers on the root", "sendbuff|recvbuff",
               [=] { return braidReduce(s, s + e, kCount, braidInt32, braidSum, 0, comm, nullptr); }, root0});
  // All-gather: in place is send == recv + rank*sendcount, nothing else.
  add("AllGather sendbuff NULL", "sendbuff",
      [=] { return braidAllGather(nullptr, d, kCount, braidInt32, comm, nullptr); });
  add("AllGather recvbuff NULL", "recvbuff",
      [=] { return braidAllGather(s, nullptr, kCount, braidInt32, comm, nullptr); });
  add("AllGather sendcount SIZE_MAX", "count",
      [=] { return braidAllGather(s, d, SIZE_MAX, braidInt32, comm, nullptr); });
  add("AllGather sendcount*size fits, *nranks overflows", "count",
      [=] { return braidAllGather(s, d, SIZE_MAX / 4, braidInt32, comm, nullptr); });
  add("AllGather datatype 99", "datatype",
      [=] { return braidAllGather(s, d, kCount, kBadType, comm, nullptr); });
  add("AllGather overlapping, not in place", "sendbuff|recvbuff",
      [=] { return braidAllGather(d + rank * kCount * e + e, d, kCount, braidInt32, comm, nullptr); });
  // Gather (root 0): recvbuff matters on the root only; in place is
  // send == recv + root*count there.
  add("Gather sendbuff NULL", "sendbuff",
      [=] { return braidGather(nullptr, d, kCount, braidInt32, 0, comm, nullptr); });
  v.push_back({"Gather recvbuff NULL on the root", "recvbuff",
               [=] { return braidGather(s, nullptr, kCount, braidInt32, 0, comm, nullptr); }, root0});
  add("Gather root -1", "root", [=] { return braidGather(s, d, kCount, braidInt32, -1, comm, nullptr); });
  add("Gather root nranks", "root",
      [=] { return braidGather(s, d, kCount, braidInt32, kRanks, comm, nullptr); });
  add("Gather count*size fits, *nranks overflows", "count",
      [=] { return braidGather(s, d, SIZE_MAX / 4, braidInt32, 0, comm, nullptr); });
  add("Gather datatype 99", "datatype",
      [=] { return braidGather(s, d, kCount, kBadType, 0, comm, nullptr); });
  v.push_back({"Gather overlapping, not in place, on the root", "sendbuff|recvbuff",
               [=] { return braidGather(d + e, d, kCount, braidInt32, 0, comm, nullptr); }, root0});
  // Scatter (root 0): sendbuff matters on the root only; in place is
  // recv == send + root*count there.
  add("Scatter recvbuff NULL", "recvbuff",
      [=] { return braidScatter(s, nullptr, kCount, braidInt32, 0, comm, nullptr); });
  v.push_back({"Scatter sendbuff NULL on the root", "sendbuff",
               [=] { return braidScatter(nullptr, d, kCount, braidInt32, 0, comm, nullptr); }, root0});
  add("Scatter root nranks", "root",
      [=] { return braidScatter(s, d, kCount, braidInt32, kRanks, comm, nullptr); });
  add("Scatter count*size fits, *nranks overflows", "count",
      [=] { return braidScatter(s, d, SIZE_MAX / 4, braidInt32, 0, comm, nullptr); });
  add("Scatter datatype -1", "datatype",
      [=] { return braidScatter(s, d, kCount, static_cast<braidDataType_t>(-1), 0, comm, nullptr); });
  v.push_back({"Scatter overlapping, not in place, on the root", "sendbuff|recvbuff",
               [=] { return braidScatter(s, s + e, kCount, braidInt32, 0, comm, nullptr); }, root0});
  // Reduce-scatter: in place is send + rank*recvcount == recv.
  add("ReduceScatter sendbuff NULL", "sendbuff",
      [=] { return braidReduceScatter(nullptr, d, kCount, braidInt32, braidSum, comm, nullptr); });
  add("ReduceScatter recvbuff NULL", "recvbuff",
      [=] { return braidReduceScatter(s, nullptr, kCount, braidInt32, braidSum, comm, nullptr); });
  add("ReduceScatter recvcount*nranks overflows", "count",
      [=] { return braidReduceScatter(s, d, SIZE_MAX / 4, braidInt32, braidSum, comm, nullptr); });
  add("ReduceScatter datatype 99", "datatype",
      [=] { return braidReduceScatter(s, d, kCount, kBadType, braidSum, comm, nullptr); });
  add("ReduceScatter op 99", "op",
      [=] { return braidReduceScatter(s, d, kCount, braidInt32, kBadOp, comm, nullptr); });
  add("ReduceScatter overlapping, not in place", "sendbuff|recvbuff", [=] {
    return braidReduceScatter(s, s + rank * kCount * e + e, kCount, braidInt32, braidSum, comm, nullptr);
  });
  // All-to-all.
  add("AllToAll sendbuff NULL", "sendbuff",
      [=] { return braidAllToAll(nullptr, d, kCount, braidInt32, comm, nullptr); });
  add("AllToAll recvbuff NULL", "recvbuff",
      [=] { return braidAllToAll(s, nullptr, kCount, braidInt32, comm, nullptr); });
  add("AllToAll count*nranks overflows", "count",
      [=] { return braidAllToAll(s, d, SIZE_MAX / 4, braidInt32, comm, nullptr); });
  add("AllToAll datatype 99", "datatype",
      [=] { return braidAllToAll(s, d, kCount, kBadType, comm, nullptr); });
  add("AllToAll overlapping, not in place", "sendbuff|recvbuff",
      [=] { return braidAllToAll(s, s + e, kCount, braidInt32, comm, nullptr); });
  // All-to-all-v: vc/vd hold {kCount, kCount} / {0, kCount}; vc+2, vd+2 are spares.
  size_t* bigCount = vc + 2;  // {SIZE_MAX, kCount}
  size_t* bigDispl = vd + 2;  // {0, SIZE_MAX}
  add("AllToAllv sendbuff NULL", "sendbuff",
      [=] { return braidAllToAllv(nullptr, vc, vd, d, vc, vd, braidInt32, comm, nullptr); });
  add("AllToAllv recvbuff NULL", "recvbuff",
      [=] { return braidAllToAllv(s, vc, vd, nullptr, vc, vd, braidInt32, comm, nullptr); });
  add("AllToAllv sendcounts NULL", "sendcounts",
      [=] { return braidAllToAllv(s, nullptr, vd, d, vc, vd, braidInt32, comm, nullptr); });
  add("AllToAllv sdispls NULL", "sdispls",
      [=] { return braidAllToAllv(s, vc, nullptr, d, vc, vd, braidInt32, comm, nullptr); });
  add("AllToAllv recvcounts NULL", "recvcounts",
      [=] { return braidAllToAllv(s, vc, vd, d, nullptr, vd, braidInt32, comm, nullptr); });
  add("AllToAllv rdispls NULL", "rdispls",
      [=] { return braidAllToAllv(s, vc, vd, d, vc, nullptr, braidInt32, comm, nullptr); });
  add("AllToAllv sendcounts[0] SIZE_MAX", "sendcounts",
      [=] { return braidAllToAllv(s, bigCount, vd, d, vc, vd, braidInt32, comm, nullptr); });
  add("AllToAllv sdispls[1] SIZE_MAX", "sdispls",
      [=] { return braidAllToAllv(s, vc, bigDispl, d, vc, vd, braidInt32, comm, nullptr); });
  add("AllToAllv recvcounts[0] SIZE_MAX", "recvcounts",
      [=] { return braidAllToAllv(s, vc, vd, d, bigCount, vd, braidInt32, comm, nullptr); });
  add("AllToAllv rdispls[1] SIZE_MAX", "rdispls",
      [=] { return braidAllToAllv(s, vc, vd, d, vc, bigDispl, braidInt32, comm, nullptr); });
  add("AllToAllv datatype 99", "datatype",
      [=] { return braidAllToAllv(s, vc, vd, d, vc, vd, kBadType, comm, nullptr); });
  // "In place is not supported": either code reads as faithful to the header.
  add("AllToAllv in place", "sendbuff|recvbuff|place",
      [=] { return braidAllToAllv(s, vc, vd, s, vc, vd, braidInt32, comm, nullptr); });
  v.back().alsoOk = braidNotSupported;
  add("AllToAllv overlapping", "sendbuff|recvbuff",
      [=] { return braidAllToAllv(s, vc, vd, s + e, vc, vd, braidInt32, comm, nullptr); });
  // Point to point (peer: the other rank).
  const int peer = 1 - rank;
  add("Send sendbuff NULL", "sendbuff",
      [=] { return braidSend(nullptr, kCount, braidInt32, peer, comm, nullptr); });
  add("Send peer -1", "peer", [=] { return braidSend(s, kCount, braidInt32, -1, comm, nullptr); });
  add("Send peer nranks", "peer", [=] { return braidSend(s, kCount, braidInt32, kRanks, comm, nullptr); });
  add("Send count SIZE_MAX", "count",
      [=] { return braidSend(s, SIZE_MAX, braidInt32, peer, comm, nullptr); });
  add("Send datatype 99", "datatype", [=] { return braidSend(s, kCount, kBadType, peer, comm, nullptr); });
  add("Recv recvbuff NULL", "recvbuff",
      [=] { return braidRecv(nullptr, kCount, braidInt32, peer, comm, nullptr); });
  add("Recv peer -1", "peer", [=] { return braidRecv(d, kCount, braidInt32, -1, comm, nullptr); });
  add("Recv peer nranks", "peer", [=] { return braidRecv(d, kCount, braidInt32, kRanks, comm, nullptr); });
  add("Recv count SIZE_MAX", "count",
      [=] { return braidRecv(d, SIZE_MAX, braidInt32, peer, comm, nullptr); });
  add("Recv datatype 99", "datatype", [=] { return braidRecv(d, kCount, kBadType, peer, comm, nullptr); });
  // PreMulSum: made ops are checked against the call's datatype and must be
  // live; making and destroying them checks every argument.
  static const float kTwo = 2.0f;
  void* two = const_cast<float*>(&kTwo);
  braidRedOp_t f32Op = braidSum, goneOp = braidSum;
  EXPECT_EQ(braidRedOpCreatePreMulSum(&f32Op, two, braidFloat32, braidScalarHostImmediate, comm),
            braidSuccess);
  EXPECT_EQ(braidRedOpCreatePreMulSum(&goneOp, two, braidFloat32, braidScalarHostImmediate, comm),
            braidSuccess);
  EXPECT_EQ(braidRedOpDestroy(goneOp, comm), braidSuccess);
  add("AllReduce PreMulSum of float32 on int32", "PreMulSum of float",
      [=] { return braidAllReduce(s, d, kCount, braidInt32, f32Op, comm, nullptr); });
  add("ReduceScatter PreMulSum destroyed", "op",
      [=] { return braidReduceScatter(s, d, kCount, braidFloat32, goneOp, comm, nullptr); });
  add("RedOpCreatePreMulSum op NULL", "op",
      [=] { return braidRedOpCreatePreMulSum(nullptr, two, braidFloat32, braidScalarHostImmediate, comm); });
  add("RedOpCreatePreMulSum scalar NULL", "scalar", [=] {
    braidRedOp_t op;
    return braidRedOpCreatePreMulSum(&op, nullptr, braidFloat32, braidScalarHostImmediate, comm);
  });
  add("RedOpCreatePreMulSum datatype 99", "datatype", [=] {
    braidRedOp_t op;
    return braidRedOpCreatePreMulSum(&op, two, kBadType, braidScalarHostImmediate, comm);
  });
  add("RedOpCreatePreMulSum residence 7", "residence", [=] {
    braidRedOp_t op;
    return braidRedOpCreatePreMulSum(&op, two, braidFloat32, static_cast<braidScalarResidence_t>(7), comm);
  });
  add("RedOpCreatePreMulSum device scalar", "braidScalarDevice", [=] {
    braidRedOp_t op;
    return braidRedOpCreatePreMulSum(&op, two, braidFloat32, braidScalarDevice, comm);
  });
  v.back().want = braidNotSupported;
  add("RedOpDestroy built-in op", "built-in", [=] { return braidRedOpDestroy(braidSum, comm); });
  add("RedOpDestroy destroyed op", "op", [=] { return braidRedOpDestroy(goneOp, comm); });
  add("RedOpDestroy op 99", "op", [=] { return braidRedOpDestroy(kBadOp, comm); });
  // Registration: a bad range, a NULL or foreign handle, one deregistered twice.
  void* handle = nullptr;
  void* arenaStart = s;
  add("CommRegister handle NULL", "handle", [=] { return braidCommRegister(comm, arenaStart, 64, nullptr); });
  add("CommRegister buff NULL", "buff", [=] {
    void* h = nullptr;
    return braidCommRegister(comm, nullptr, 64, &h);
  });
  add("CommRegister size 0", "size", [=] {
    void* h = nullptr;
    return braidCommRegister(comm, arenaStart, 0, &h);
  });
  add("CommRegister wraps", "wraps", [=] {
    void* h = nullptr;
    return braidCommRegister(comm, arenaStart, SIZE_MAX, &h);
  });
  add("CommDeregister handle NULL", "handle", [=] { return braidCommDeregister(comm, nullptr); });
  add("CommDeregister foreign handle", "not a registration",
      [=] { return braidCommDeregister(comm, arenaStart); });
  EXPECT_EQ(braidCommRegister(comm, arenaStart, 64, &handle), braidSuccess);
  EXPECT_EQ(braidCommDeregister(comm, handle), braidSuccess);
  add("CommDeregister twice", "deregistered", [=] { return braidCommDeregister(comm, handle); });
  // Queries with a NULL result pointer.
  add("CommCount count NULL", "count", [=] { return braidCommCount(comm, nullptr); });
  add("CommUserRank rank NULL", "rank", [=] { return braidCommUserRank(comm, nullptr); });
  add("CommGetAsyncError asyncError NULL", "asyncError",
      [=] { return braidCommGetAsyncError(comm, nullptr); });
  return v;
}

TEST(BadInputCollectives, EveryEntryTwoRanks) {
  RunOptions o;
  o.nranks = kRanks;
  o.braidTimeoutMs = 10000;
  o.limitSeconds = 60;
  runRanks(o, [](RankContext& ctx) {
    std::vector<uint8_t> arena(kArena);
    for (size_t i = 0; i < kArena; ++i) arena[i] = static_cast<uint8_t>(i * 7 + ctx.rank);
    size_t vc[4] = {kCount, kCount, SIZE_MAX, kCount};
    size_t vd[4] = {0, kCount, 0, SIZE_MAX};
    const std::vector<uint8_t> arenaCopy = arena;
    size_t vcCopy[4], vdCopy[4];
    memcpy(vcCopy, vc, sizeof vc);
    memcpy(vdCopy, vd, sizeof vd);

    if (!expectAllReduceWorks(ctx.comm, ctx.rank, "init")) return;
    for (const BadCall& b : badCalls(ctx.comm, ctx.rank, arena.data(), vc, vd)) {
      if (b.onRank(ctx.rank)) {
        braidResult_t r = b.call();
        expectRejected(b.what, r == b.alsoOk && r != braidSuccess ? b.want : r, b.want, ctx.comm, b.names);
        EXPECT_TRUE(arena == arenaCopy) << b.what << ": a user buffer was written";
        EXPECT_TRUE(memcmp(vc, vcCopy, sizeof vc) == 0 && memcmp(vd, vdCopy, sizeof vd) == 0)
            << b.what << ": the counts or displacements were written";
      }
      if (!expectAllReduceWorks(ctx.comm, ctx.rank, b.what)) return;
    }
    int value = -1;
    EXPECT_EQ(braidCommCount(ctx.comm, &value), braidSuccess);
    EXPECT_EQ(value, kRanks);
    EXPECT_EQ(braidCommUserRank(ctx.comm, &value), braidSuccess);
    EXPECT_EQ(value, ctx.rank);
    braidResult_t async = braidInternalError;
    EXPECT_EQ(braidCommGetAsyncError(ctx.comm, &async), braidSuccess);
    EXPECT_EQ(async, braidSuccess) << "no asynchronous error after only rejected calls";
  });
}

}  // namespace
}  // namespace braid::itest
