#include "transports/ibverbs/ib_queue_pair.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "transports/net/auth.h"

namespace braid::ibverbs {
namespace {

// Receiver not ready: retry for ever (the protocol never relies on it, but a
// slow poller must not kill the connection). Retransmissions: IbPath.
constexpr uint8_t kRnrRetryForever = 7, kMinRnrTimer = 12;
constexpr size_t kBounceRegion = size_t{kDepth} * kBounceBytes;

}  // namespace

Status QueuePair::fail(const char* call, int err) const {
  return systemError("ibverbs " + port_.name + ": " + call, err ? err : EIO);
}

Status QueuePair::create(const VerbsApi& api, const IbPort& port, std::unique_ptr<QueuePair>* out) {
  std::unique_ptr<QueuePair> q(new QueuePair(api, port));
  ibv_context* ctx = port.device->context();
  const int cqe = static_cast<int>(kSendQueueDepth + kRecvSlots);
  q->cq_ = api.createCq(ctx, cqe, nullptr, nullptr, 0);
  if (!q->cq_) return q->fail("ibv_create_cq", errno);
  ibv_qp_init_attr init{};
  init.send_cq = q->cq_;
  init.recv_cq = q->cq_;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = kSendQueueDepth;
  init.cap.max_recv_wr = kRecvSlots;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  q->qp_ = api.createQp(port.device->pd(), &init);
  if (!q->qp_) return q->fail("ibv_create_qp", errno);

  const size_t slots = size_t{kRecvSlots + kSendSlots} * kSlotBytes;
  q->memory_.reset(new uint8_t[slots + kBounceRegion]());
  q->bounce_ = q->memory_.get() + slots;
  BRAID_RETURN_IF_ERROR(q->registerBuffer(q->memory_.get(), slots + kBounceRegion, true, &q->mr_));
  BRAID_RETURN_IF_ERROR(net::randomBytes(&q->psn_, sizeof(q->psn_)));
  q->psn_ &= 0xFFFFFF;
  q->maxWriteBytes_ = port.maxMessageBytes ? port.maxMessageBytes : size_t{1} << 30;

  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port.port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (int err =
          api.modifyQp(q->qp_, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return q->fail("ibv_modify_qp to INIT", err);
  for (uint32_t slot = 0; slot < kRecvSlots; ++slot) BRAID_RETURN_IF_ERROR(q->repost(slot));
  *out = std::move(q);
  return Status::ok();
}

QueuePair::~QueuePair() {
  // The queue pair first: nothing may land in memory about to be freed.
  if (qp_ && api_.destroyQp(qp_) != 0) BRAID_WARN("ibverbs %s: ibv_destroy_qp failed", port_.name.c_str());
  if (mr_) deregister(mr_);
  if (cq_ && api_.destroyCq(cq_) != 0) BRAID_WARN("ibverbs %s: ibv_destroy_cq failed", port_.name.c_str());
}

QpInfo QueuePair::localInfo() const {
  QpInfo info;
  info.lid = port_.lid;
  info.qpn = qp_->qp_num;
  info.psn = psn_;
  std::memcpy(info.gid, port_.gid.raw, sizeof(info.gid));
  info.mtu = static_cast<uint8_t>(port_.mtu);
  info.ethernet = port_.ethernet;
  info.gidIndex = static_cast<uint8_t>(port_.gidIndex);
  return info;
}

Status QueuePair::connect(const QpInfo& peer) {
  if (peer.ethernet != static_cast<uint8_t>(port_.ethernet))
    return invalidUsage("ibverbs " + port_.name + ": the peer's port is " +
                        (peer.ethernet ? "RoCE" : "InfiniBand") +
                        ", this one is not (BRAID_IB_HCA picks the ports)");
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(peer.mtu, port_.mtu));
  attr.dest_qp_num = peer.qpn;
  attr.rq_psn = peer.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = kMinRnrTimer;
  attr.ah_attr.dlid = peer.lid;
  attr.ah_attr.port_num = port_.port;
  attr.ah_attr.sl = port_.path.serviceLevel;
  if (port_.ethernet || peer.lid == 0) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, peer.gid, sizeof(peer.gid));
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port_.gidIndex);
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.traffic_class = port_.path.trafficClass;
  }
  if (int err = api_.modifyQp(qp_, &attr,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return fail("ibv_modify_qp to RTR", err);
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = port_.path.timeout;
  attr.retry_cnt = port_.path.retryCount;
  attr.rnr_retry = kRnrRetryForever;
  attr.sq_psn = psn_;
  attr.max_rd_atomic = 1;
  if (int err = api_.modifyQp(qp_, &attr,
                              IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
    return fail("ibv_modify_qp to RTS", err);
  return Status::ok();
}

std::string QueuePair::describe(const ibv_wc& wc) const {
  return std::string(api_.wcStatusStr(wc.status)) + " (status " + std::to_string(wc.status) +
         ", vendor error " + std::to_string(wc.vendor_err) + ")";
}

Status QueuePair::repost(uint32_t slot) {
  ibv_sge sge{reinterpret_cast<uint64_t>(memory_.get() + size_t{slot} * kSlotBytes), kSlotBytes, mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = workId(Work::kCtrlRecv, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int err = ibv_post_recv(qp_, &wr, &bad)) return fail("ibv_post_recv", err);
  return Status::ok();
}

Status QueuePair::sendCtrl(const CtrlMsg& msg) {
  if (!canSendCtrl()) return internalError("ibverbs " + port_.name + ": no free control slot");
  CtrlMsg* slot = sendSlot(nextSendSlot_);
  *slot = msg;
  ibv_sge sge{reinterpret_cast<uint64_t>(slot), sizeof(CtrlMsg), mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = workId(Work::kCtrlSend, nextSendSlot_);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(qp_, &wr, &bad)) return fail("ibv_post_send (control)", err);
  nextSendSlot_ = (nextSendSlot_ + 1) % kSendSlots;
  ++ctrlInFlight_;
  return Status::ok();
}

Status QueuePair::write(uint64_t wrId, const void* local, uint32_t lkey, size_t bytes, uint64_t remote,
                        uint32_t rkey, bool withImm, uint32_t imm) {
  ibv_sge sge{reinterpret_cast<uint64_t>(local), static_cast<uint32_t>(bytes), lkey};
  ibv_send_wr wr{};
  wr.wr_id = wrId;
  wr.sg_list = bytes ? &sge : nullptr;
  wr.num_sge = bytes ? 1 : 0;
  wr.opcode = withImm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htobe32(imm);
  wr.wr.rdma.remote_addr = remote;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(qp_, &wr, &bad)) return fail("ibv_post_send (RDMA write)", err);
  ++writesInFlight_;
  return Status::ok();
}

Status QueuePair::registerBuffer(void* data, size_t bytes, bool remoteWrite, ibv_mr** mr) const {
  // A send's source needs no access flag (local reads always work), and must
  // not ask for write access: it may be read-only memory (const data).
  const int access = remoteWrite ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
  *mr = api_.regMr(port_.device->pd(), data, bytes, access);
  if (*mr == nullptr) return fail(("ibv_reg_mr of " + std::to_string(bytes) + " bytes").c_str(), errno);
  return Status::ok();
}

void QueuePair::deregister(ibv_mr* mr) const {
  if (api_.deregMr(mr) != 0) BRAID_WARN("ibverbs %s: ibv_dereg_mr failed", port_.name.c_str());
}

}  // namespace braid::ibverbs
