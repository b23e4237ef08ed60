// A test-only libibverbs: the verbs transport's unit tests dlopen this library
// instead of libibverbs.so.1 and get one in-process RDMA fabric (see
// fake_fabric.h) with a single device, so both ends of a connection run on a
// machine without RDMA. Only the functions the transport looks up are here.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "fake_fabric.h"

// verbs.h turns these names into inline wrappers; the library must export the
// plain functions they end up calling.
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr

#define BRAID_FAKE_VERBS_EXPORT extern "C" __attribute__((visibility("default")))

namespace braid::fake_verbs {
namespace {

constexpr int kInitMask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                         IBV_QP_MAX_QP_RD_ATOMIC;

// fe80::2bf:aeff:fe00:1, link-local as an InfiniBand port's first GID is.
constexpr uint8_t kGid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0xbf, 0xae, 0xff, 0xfe, 0, 0, 0x01};

ibv_device makeDevice() {
  ibv_device device{};
  device.node_type = IBV_NODE_CA;
  device.transport_type = IBV_TRANSPORT_IB;
  std::strcpy(device.name, "braidfake0");
  std::strcpy(device.dev_name, "uverbs0");
  return device;
}

ibv_device gDevice = makeDevice();

int deviceCount() {
  const char* configured = std::getenv("BRAID_FAKE_VERBS_DEVICES");
  return configured && std::strcmp(configured, "0") == 0 ? 0 : 1;
}

uint32_t nextQpNum() {
  uint32_t& next = fabric().nextQpNum;
  const uint32_t qpNum = next;
  next = next % 0xFFFFFF + 1;  // QP numbers are 24-bit and never 0
  return qpNum;
}

bool isSane(const ibv_qp_init_attr& init) {
  const ibv_qp_cap& cap = init.cap;
  return init.qp_type == IBV_QPT_RC && init.send_cq && init.recv_cq && !init.srq &&
         cap.max_send_wr <= kMaxQpWr && cap.max_recv_wr <= kMaxQpWr && cap.max_send_sge <= kMaxSge &&
         cap.max_recv_sge <= kMaxSge && cap.max_inline_data <= kMaxInlineBytes;
}

// The mask a transition needs, or nothing when RC does not allow it.
std::optional<int> requiredMask(ibv_qp_state from, ibv_qp_state to) {
  if (to == IBV_QPS_ERR || to == IBV_QPS_RESET) return IBV_QP_STATE;
  if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) return kInitMask;
  if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) return kRtrMask;
  if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) return kRtsMask;
  return std::nullopt;
}

// The fabric has one port, so the only reachable lid is its own.
bool isValidPath(const ibv_qp_attr& attr) {
  return attr.ah_attr.dlid == kPortLid && findQp(attr.dest_qp_num) != nullptr;
}

void enterState(FakeQp& qp, const ibv_qp_attr& attr) {
  if (attr.qp_state == IBV_QPS_ERR) return moveToError(qp);
  if (attr.qp_state == IBV_QPS_RESET) return moveToReset(qp);
  if (attr.qp_state == IBV_QPS_RTR) qp.destQpNum = attr.dest_qp_num;
  qp.qp.state = attr.qp_state;
}

}  // namespace
}  // namespace braid::fake_verbs

using namespace braid::fake_verbs;

BRAID_FAKE_VERBS_EXPORT ibv_device** ibv_get_device_list(int* numDevices) {
  const int count = deviceCount();
  if (numDevices) *numDevices = count;
  ibv_device** list = new ibv_device*[count + 1]();
  if (count == 1) list[0] = &gDevice;
  return list;
}

BRAID_FAKE_VERBS_EXPORT void ibv_free_device_list(ibv_device** list) { delete[] list; }

BRAID_FAKE_VERBS_EXPORT const char* ibv_get_device_name(ibv_device* device) {
  return device ? device->name : nullptr;
}

BRAID_FAKE_VERBS_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
  if (device != &gDevice) return errno = ENODEV, nullptr;
  FakeContext* context = new FakeContext{};
  ibv_context& verbs = context->context;
  verbs.device = device;
  verbs.ops.poll_cq = pollCq;
  verbs.ops.post_send = postSend;
  verbs.ops.post_recv = postRecv;
  verbs.cmd_fd = -1;
  verbs.async_fd = -1;
  verbs.num_comp_vectors = 1;
  verbs.abi_compat = nullptr;  // anything but __VERBS_ABI_IS_EXTENDED keeps verbs.h off extended paths
  return &verbs;
}

BRAID_FAKE_VERBS_EXPORT int ibv_close_device(ibv_context* verbs) {
  std::lock_guard lock(fabric().mutex);
  FakeContext* context = fake<FakeContext>(verbs);
  if (context->pds > 0 || context->cqs > 0) return EBUSY;
  delete context;
  return 0;
}

BRAID_FAKE_VERBS_EXPORT int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  if (!context || !attr) return EINVAL;
  *attr = {};
  std::strcpy(attr->fw_ver, "fake");
  attr->max_mr_size = UINT64_MAX;
  attr->page_size_cap = 4096;
  attr->max_qp = 1 << 16;
  attr->max_qp_wr = kMaxQpWr;
  attr->max_sge = kMaxSge;
  attr->max_cq = 1 << 16;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = 1 << 20;
  attr->max_pd = 1 << 16;
  attr->max_qp_rd_atom = 16;
  attr->max_qp_init_rd_atom = 16;
  attr->max_pkeys = 1;
  attr->phys_port_cnt = 1;
  return 0;
}

// Exported with the full ibv_port_attr: the verbs.h wrapper passes one.
BRAID_FAKE_VERBS_EXPORT int ibv_query_port(ibv_context* context, uint8_t port, _compat_ibv_port_attr* out) {
  if (!context || !out || port != 1) return EINVAL;
  ibv_port_attr* attr = reinterpret_cast<ibv_port_attr*>(out);
  *attr = {};
  attr->state = IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = 1;
  attr->max_msg_sz = kMaxMessageBytes;
  attr->pkey_tbl_len = 1;
  attr->lid = kPortLid;
  attr->sm_lid = kPortLid;
  attr->max_vl_num = 1;
  attr->active_width = 2;   // 4x
  attr->active_speed = 32;  // EDR
  attr->phys_state = 5;     // LinkUp
  attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
  return 0;
}

BRAID_FAKE_VERBS_EXPORT int ibv_query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  if (!context || !gid || port != 1 || index != 0) return EINVAL;
  std::memcpy(gid->raw, kGid, sizeof(kGid));
  return 0;
}

BRAID_FAKE_VERBS_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (!context) return errno = EINVAL, nullptr;
  std::lock_guard lock(fabric().mutex);
  FakePd* pd = new FakePd{};
  pd->pd.context = context;
  pd->pd.handle = fabric().nextHandle++;
  ++fake<FakeContext>(context)->pds;
  return &pd->pd;
}

BRAID_FAKE_VERBS_EXPORT int ibv_dealloc_pd(ibv_pd* verbs) {
  std::lock_guard lock(fabric().mutex);
  FakePd* pd = fake<FakePd>(verbs);
  if (pd->mrs > 0 || pd->qps > 0) return EBUSY;
  --fake<FakeContext>(verbs->context)->pds;
  delete pd;
  return 0;
}

// Like libibverbs, remote write needs local write too.
BRAID_FAKE_VERBS_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  const bool rangeIsSane = length == 0 || (addr && reinterpret_cast<uintptr_t>(addr) <= UINTPTR_MAX - length);
  const bool accessIsSane = !(access & IBV_ACCESS_REMOTE_WRITE) || (access & IBV_ACCESS_LOCAL_WRITE);
  if (!pd || !rangeIsSane || !accessIsSane) return errno = EINVAL, nullptr;
  std::lock_guard lock(fabric().mutex);
  Fabric& f = fabric();
  FakeMr* mr = new FakeMr{};
  mr->mr = {pd->context, pd, addr, length, f.nextHandle++, f.nextLkey++, f.nextRkey++};
  mr->access = access;
  f.mrsByLkey[mr->mr.lkey] = mr;
  f.mrsByRkey[mr->mr.rkey] = mr;
  ++fake<FakePd>(pd)->mrs;
  return &mr->mr;
}

BRAID_FAKE_VERBS_EXPORT int ibv_dereg_mr(ibv_mr* verbs) {
  if (!verbs) return EINVAL;
  std::lock_guard lock(fabric().mutex);
  Fabric& f = fabric();
  auto found = f.mrsByLkey.find(verbs->lkey);
  if (found == f.mrsByLkey.end() || &found->second->mr != verbs) return EINVAL;
  f.mrsByLkey.erase(found);
  f.mrsByRkey.erase(verbs->rkey);
  --fake<FakePd>(verbs->pd)->mrs;
  delete fake<FakeMr>(verbs);
  return 0;
}

BRAID_FAKE_VERBS_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cqContext,
                                              ibv_comp_channel* channel, int compVector) {
  if (!context || cqe <= 0 || cqe > kMaxCqe || channel || compVector != 0) return errno = EINVAL, nullptr;
  std::lock_guard lock(fabric().mutex);
  FakeCq* cq = new FakeCq{};
  cq->cq.context = context;
  cq->cq.cq_context = cqContext;
  cq->cq.handle = fabric().nextHandle++;
  cq->cq.cqe = cqe;
  ++fake<FakeContext>(context)->cqs;
  return &cq->cq;
}

BRAID_FAKE_VERBS_EXPORT int ibv_destroy_cq(ibv_cq* verbs) {
  std::lock_guard lock(fabric().mutex);
  FakeCq* cq = fake<FakeCq>(verbs);
  if (cq->qps > 0) return EBUSY;
  --fake<FakeContext>(verbs->context)->cqs;
  delete cq;
  return 0;
}

// Reports the granted caps back in init->cap: what was asked for, with the
// full inline size, as hardware tends to round it up.
BRAID_FAKE_VERBS_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  if (!pd || !init || !isSane(*init)) return errno = EINVAL, nullptr;
  std::lock_guard lock(fabric().mutex);
  init->cap.max_inline_data = kMaxInlineBytes;
  FakeQp* qp = new FakeQp{};
  qp->qp.context = pd->context;
  qp->qp.qp_context = init->qp_context;
  qp->qp.pd = pd;
  qp->qp.send_cq = init->send_cq;
  qp->qp.recv_cq = init->recv_cq;
  qp->qp.handle = fabric().nextHandle++;
  qp->qp.qp_num = nextQpNum();
  qp->qp.state = IBV_QPS_RESET;
  qp->qp.qp_type = IBV_QPT_RC;
  qp->cap = init->cap;
  qp->signalAll = init->sq_sig_all != 0;
  fabric().qpsByNum[qp->qp.qp_num] = qp;
  ++fake<FakePd>(pd)->qps;
  ++fake<FakeCq>(init->send_cq)->qps;
  ++fake<FakeCq>(init->recv_cq)->qps;
  return &qp->qp;
}

BRAID_FAKE_VERBS_EXPORT int ibv_modify_qp(ibv_qp* verbs, ibv_qp_attr* attr, int mask) {
  if (!verbs || !attr || !(mask & IBV_QP_STATE)) return EINVAL;
  std::lock_guard lock(fabric().mutex);
  FakeQp& qp = *fake<FakeQp>(verbs);
  const std::optional<int> required = requiredMask(qp.qp.state, attr->qp_state);
  if (!required || (mask & *required) != *required) return EINVAL;
  if (attr->qp_state == IBV_QPS_RTR && !isValidPath(*attr)) return EINVAL;
  enterState(qp, *attr);
  return 0;
}

// Queued sends vanish without completions, as on hardware.
BRAID_FAKE_VERBS_EXPORT int ibv_destroy_qp(ibv_qp* verbs) {
  if (!verbs) return EINVAL;
  std::lock_guard lock(fabric().mutex);
  if (findQp(verbs->qp_num) != fake<FakeQp>(verbs)) return EINVAL;
  fabric().qpsByNum.erase(verbs->qp_num);
  --fake<FakePd>(verbs->pd)->qps;
  --fake<FakeCq>(verbs->send_cq)->qps;
  --fake<FakeCq>(verbs->recv_cq)->qps;
  delete fake<FakeQp>(verbs);
  return 0;
}

BRAID_FAKE_VERBS_EXPORT const char* ibv_wc_status_str(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return "success";
    case IBV_WC_LOC_LEN_ERR:
      return "local length error";
    case IBV_WC_LOC_PROT_ERR:
      return "local protection error";
    case IBV_WC_WR_FLUSH_ERR:
      return "Work Request Flushed Error";
    case IBV_WC_REM_INV_REQ_ERR:
      return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR:
      return "remote access error";
    case IBV_WC_REM_OP_ERR:
      return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR:
      return "transport retry counter exceeded";
    default:
      return "unknown";
  }
}
