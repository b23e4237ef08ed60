// A test-only libibverbs: the verbs transport's tests dlopen this library
// instead of libibverbs.so.1 and get one RDMA fabric (see fake_fabric.h) with
// a single device, in-process or shared by processes, so both ends of a
// connection run on a machine without RDMA. Only the functions the transport
// looks up are here.
#include <atomic>
#include <cerrno>
#include <cstdio>
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

// BRAID_FAKE_VERBS_LINK=ethernet: the port is RoCE (no LID; addressed by
// GID, four of them, through a global route header).
bool isEthernet() {
  const char* link = std::getenv("BRAID_FAKE_VERBS_LINK");
  return link && std::strcmp(link, "ethernet") == 0;
}

int deviceCount() {
  const char* configured = std::getenv("BRAID_FAKE_VERBS_DEVICES");
  return configured && std::strcmp(configured, "0") == 0 ? 0 : 1;
}

// QP numbers and keys name their record's slot in their low bits, and a
// sequence above them keeps a reused slot from answering to an old name.
uint32_t nextSeq(uint32_t* seq, uint32_t limit) {
  *seq = *seq % limit + 1;
  return *seq;
}

uint32_t makeQpNum(Shared& s, uint32_t slot) {
  return nextSeq(&s.qpSeq, 0xFFFF) * kMaxQps + slot;  // 24-bit and never 0
}

// Different ranges, so a caller that mixes up the keys or a key with a QP
// number names nothing: lkeys from 0x1000 below 2^31, rkeys above.
uint32_t makeLkey(Shared& s, uint32_t slot) { return nextSeq(&s.keySeq, 0x7FFFF) * kMaxMrs + slot; }

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

// The fabric has one port, so the only reachable lid (or RoCE GID) is its
// own; values past the verbs' ranges are refused, as hardware does.
bool isValidPath(Fabric& f, const ibv_qp_attr& attr) {
  const bool reachable =
      isEthernet() ? attr.ah_attr.is_global && std::memcmp(attr.ah_attr.grh.dgid.raw, kGid, sizeof(kGid)) == 0
                   : attr.ah_attr.dlid == kPortLid;
  return reachable && attr.ah_attr.sl <= 15 && findQp(f, attr.dest_qp_num) != nullptr;
}

// What the last transition to RTR and RTS in this process asked of the path,
// for the tests: service level, traffic class, global route, timeout, retries.
int gLastPath[5] = {-1, -1, -1, -1, -1};

void notePath(const ibv_qp_attr& attr) {
  if (attr.qp_state == IBV_QPS_RTR) {
    gLastPath[0] = attr.ah_attr.sl;
    gLastPath[1] = attr.ah_attr.grh.traffic_class;
    gLastPath[2] = attr.ah_attr.is_global;
  } else if (attr.qp_state == IBV_QPS_RTS) {
    gLastPath[3] = attr.timeout;
    gLastPath[4] = attr.retry_cnt;
  }
}

void enterState(Fabric& f, QpRecord& qp, const ibv_qp_attr& attr) {
  if (attr.qp_state == IBV_QPS_ERR) return moveToError(f, qp);
  if (attr.qp_state == IBV_QPS_RESET) return moveToReset(qp);
  if (attr.qp_state == IBV_QPS_RTR) qp.destQpNum = attr.dest_qp_num;
  qp.state = attr.qp_state;
}

// Whether every page of [addr, addr + length) is mapped writable, from
// /proc/self/maps: pinning pages for write fails with EFAULT otherwise, as
// the kernel refuses a real registration.
bool isWritable(uintptr_t addr, size_t length) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return true;
  uintptr_t covered = addr;
  const uintptr_t end = addr + length;
  char line[512];
  while (covered < end && std::fgets(line, sizeof(line), maps)) {
    unsigned long from = 0, to = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &from, &to, perms) != 3) continue;
    if (from <= covered && covered < to) {
      if (perms[1] != 'w') break;
      covered = to;
    }
  }
  std::fclose(maps);
  return covered >= end;
}

// ibv_reg_mr calls this process made, successful or not: tests check that a
// registered buffer spares its messages theirs.
std::atomic<uint64_t> gRegistrations{0};

// braid_fake_verbs_after_empty_poll's hook: run once, by the next ibv_poll_cq
// of this process that finds nothing, after it looked. Lets a test put
// another end's work exactly between a poll and what its caller does next.
struct EmptyPollHook {
  void (*fn)(void*);
  void* arg;
};
std::atomic<EmptyPollHook*> gEmptyPollHook{nullptr};

int pollCqThenHook(ibv_cq* cq, int capacity, ibv_wc* out) {
  const int polled = pollCq(cq, capacity, out);
  if (polled == 0 && gEmptyPollHook.load(std::memory_order_relaxed) != nullptr) {
    if (EmptyPollHook* hook = gEmptyPollHook.exchange(nullptr)) {
      hook->fn(hook->arg);
      delete hook;
    }
  }
  return polled;
}

}  // namespace
}  // namespace braid::fake_verbs

using namespace braid::fake_verbs;

// Not libibverbs functions: the tests' count of ibv_reg_mr calls, the last
// path asked for, and a hook on empty polls (above).
BRAID_FAKE_VERBS_EXPORT uint64_t braid_fake_verbs_registrations() { return gRegistrations.load(); }
BRAID_FAKE_VERBS_EXPORT void braid_fake_verbs_last_path(int out[5]) {
  std::memcpy(out, gLastPath, sizeof(gLastPath));
}
// Arms the hook above (replacing one not yet run).
BRAID_FAKE_VERBS_EXPORT void braid_fake_verbs_after_empty_poll(void (*fn)(void*), void* arg) {
  delete gEmptyPollHook.exchange(new EmptyPollHook{fn, arg});
}

// Opens the fabric (see fake_fabric.h): nullptr with errno set when it cannot.
BRAID_FAKE_VERBS_EXPORT ibv_device** ibv_get_device_list(int* numDevices) {
  const int count = deviceCount();
  if (count > 0 && !tryFabric()) return nullptr;
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
  if (!tryFabric()) return errno = ENODEV, nullptr;
  FakeContext* context = new FakeContext{};
  ibv_context& verbs = context->context;
  verbs.device = device;
  verbs.ops.poll_cq = pollCqThenHook;
  verbs.ops.post_send = postSend;
  verbs.ops.post_recv = postRecv;
  verbs.cmd_fd = -1;
  verbs.async_fd = -1;
  verbs.num_comp_vectors = 1;
  verbs.abi_compat = nullptr;  // anything but __VERBS_ABI_IS_EXTENDED keeps verbs.h off extended paths
  return &verbs;
}

BRAID_FAKE_VERBS_EXPORT int ibv_close_device(ibv_context* verbs) {
  Lock lock;
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
  attr->max_qp = kMaxQps;
  attr->max_qp_wr = kMaxQpWr;
  attr->max_sge = kMaxSge;
  attr->max_cq = kMaxCqs;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = kMaxMrs;
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
  attr->gid_tbl_len = isEthernet() ? 4 : 1;
  attr->max_msg_sz = kMaxMessageBytes;
  attr->pkey_tbl_len = 1;
  attr->lid = isEthernet() ? 0 : kPortLid;
  attr->sm_lid = isEthernet() ? 0 : kPortLid;
  attr->max_vl_num = 1;
  attr->active_width = 2;   // 4x
  attr->active_speed = 32;  // EDR
  attr->phys_state = 5;     // LinkUp
  attr->link_layer = isEthernet() ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
  return 0;
}

BRAID_FAKE_VERBS_EXPORT int ibv_query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  if (!context || !gid || port != 1 || index < 0 || index >= (isEthernet() ? 4 : 1)) return EINVAL;
  std::memcpy(gid->raw, kGid, sizeof(kGid));
  return 0;
}

BRAID_FAKE_VERBS_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (!context) return errno = EINVAL, nullptr;
  Lock lock;
  FakePd* pd = new FakePd{};
  pd->pd.context = context;
  pd->pd.handle = lock.fabric().shared->nextHandle++;
  ++fake<FakeContext>(context)->pds;
  return &pd->pd;
}

BRAID_FAKE_VERBS_EXPORT int ibv_dealloc_pd(ibv_pd* verbs) {
  Lock lock;
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
  ++gRegistrations;
  if ((access & IBV_ACCESS_LOCAL_WRITE) && length > 0 &&
      !isWritable(reinterpret_cast<uintptr_t>(addr), length))
    return errno = EFAULT, nullptr;
  Lock lock;
  Fabric& f = lock.fabric();
  Shared& s = *f.shared;
  const int slot = allocMrSlot(f);
  if (slot < 0) return errno = ENOMEM, nullptr;
  const uint32_t lkey = makeLkey(s, static_cast<uint32_t>(slot));
  const uint32_t rkey = lkey | 0x80000000u;
  MrRecord& record = s.mrs[slot];
  record = {1, f.self, lkey, rkey, pd->handle, access, reinterpret_cast<uintptr_t>(addr), length};
  FakeMr* mr = new FakeMr{};
  mr->mr = {pd->context, pd, addr, length, s.nextHandle++, lkey, rkey};
  mr->slot = static_cast<uint32_t>(slot);
  ++fake<FakePd>(pd)->mrs;
  return &mr->mr;
}

BRAID_FAKE_VERBS_EXPORT int ibv_dereg_mr(ibv_mr* verbs) {
  if (!verbs) return EINVAL;
  Lock lock;
  Fabric& f = lock.fabric();
  MrRecord* record = findMrByLkey(f, verbs->lkey);
  if (!record || record->owner != f.self || fake<FakeMr>(verbs)->slot != verbs->lkey % kMaxMrs) return EINVAL;
  *record = {};
  --fake<FakePd>(verbs->pd)->mrs;
  delete fake<FakeMr>(verbs);
  return 0;
}

BRAID_FAKE_VERBS_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cqContext,
                                              ibv_comp_channel* channel, int compVector) {
  if (!context || cqe <= 0 || cqe > kMaxCqe || channel || compVector != 0) return errno = EINVAL, nullptr;
  Lock lock;
  Fabric& f = lock.fabric();
  Shared& s = *f.shared;
  const int slot = allocCqSlot(f);
  if (slot < 0) return errno = ENOMEM, nullptr;
  CqRecord& record = s.cqs[slot];
  if (!allocRing(f, &record.completions, static_cast<uint32_t>(cqe), sizeof(ibv_wc)))
    return errno = ENOMEM, nullptr;
  record.inUse = 1;
  record.owner = f.self;
  record.id = s.nextCqId++;
  record.overrun = 0;
  FakeCq* cq = new FakeCq{};
  cq->cq.context = context;
  cq->cq.cq_context = cqContext;
  cq->cq.handle = s.nextHandle++;
  cq->cq.cqe = cqe;
  cq->slot = static_cast<uint32_t>(slot);
  ++fake<FakeContext>(context)->cqs;
  return &cq->cq;
}

BRAID_FAKE_VERBS_EXPORT int ibv_destroy_cq(ibv_cq* verbs) {
  Lock lock;
  FakeCq* cq = fake<FakeCq>(verbs);
  if (cq->qps > 0) return EBUSY;
  freeCq(lock.fabric(), cq->slot);
  --fake<FakeContext>(verbs->context)->cqs;
  delete cq;
  return 0;
}

// Reports the granted caps back in init->cap: what was asked for, with the
// full inline size, as hardware tends to round it up.
BRAID_FAKE_VERBS_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  if (!pd || !init || !isSane(*init)) return errno = EINVAL, nullptr;
  Lock lock;
  Fabric& f = lock.fabric();
  Shared& s = *f.shared;
  const int slot = allocQpSlot(f);
  if (slot < 0) return errno = ENOMEM, nullptr;
  QpRecord& record = s.qps[slot];
  if (!allocRing(f, &record.sends, init->cap.max_send_wr, sizeof(SendWork))) return errno = ENOMEM, nullptr;
  if (!allocRing(f, &record.recvs, init->cap.max_recv_wr, sizeof(RecvWork))) {
    freeRing(f, &record.sends);
    return errno = ENOMEM, nullptr;
  }
  init->cap.max_inline_data = kMaxInlineBytes;
  record.inUse = 1;
  record.owner = f.self;
  record.qpNum = makeQpNum(s, static_cast<uint32_t>(slot));
  record.pdHandle = pd->handle;
  record.sendCq = fake<FakeCq>(init->send_cq)->slot;
  record.recvCq = fake<FakeCq>(init->recv_cq)->slot;
  record.state = IBV_QPS_RESET;
  record.signalAll = init->sq_sig_all != 0;
  record.destQpNum = 0;
  record.cap = init->cap;
  FakeQp* qp = new FakeQp{};
  qp->qp.context = pd->context;
  qp->qp.qp_context = init->qp_context;
  qp->qp.pd = pd;
  qp->qp.send_cq = init->send_cq;
  qp->qp.recv_cq = init->recv_cq;
  qp->qp.handle = s.nextHandle++;
  qp->qp.qp_num = record.qpNum;
  qp->qp.state = IBV_QPS_RESET;
  qp->qp.qp_type = IBV_QPT_RC;
  qp->slot = static_cast<uint32_t>(slot);
  f.localQps[slot] = qp;
  ++fake<FakePd>(pd)->qps;
  ++fake<FakeCq>(init->send_cq)->qps;
  ++fake<FakeCq>(init->recv_cq)->qps;
  return &qp->qp;
}

BRAID_FAKE_VERBS_EXPORT int ibv_modify_qp(ibv_qp* verbs, ibv_qp_attr* attr, int mask) {
  if (!verbs || !attr || !(mask & IBV_QP_STATE)) return EINVAL;
  Lock lock;
  Fabric& f = lock.fabric();
  QpRecord& qp = f.shared->qps[fake<FakeQp>(verbs)->slot];
  const std::optional<int> required = requiredMask(qp.state, attr->qp_state);
  if (!required || (mask & *required) != *required) return EINVAL;
  if (attr->qp_state == IBV_QPS_RTR && !isValidPath(f, *attr)) return EINVAL;
  if (attr->qp_state == IBV_QPS_RTS && (attr->timeout > 31 || attr->retry_cnt > 7)) return EINVAL;
  notePath(*attr);
  enterState(f, qp, *attr);
  return 0;
}

// Queued sends vanish without completions, as on hardware.
BRAID_FAKE_VERBS_EXPORT int ibv_destroy_qp(ibv_qp* verbs) {
  if (!verbs) return EINVAL;
  Lock lock;
  Fabric& f = lock.fabric();
  const uint32_t slot = verbs->qp_num % kMaxQps;
  if (findQp(f, verbs->qp_num) == nullptr || f.localQps[slot] != fake<FakeQp>(verbs)) return EINVAL;
  freeQp(f, slot);
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
