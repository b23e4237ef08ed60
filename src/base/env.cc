#include "base/env.h"

#include <cstdlib>
#include <cstring>

#include "base/log.h"

namespace braid::env {

const std::vector<Variable>& all() {
  static const std::vector<Variable> vars = {
      {"BRAID_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE. Lines carry a host:pid rank prefix."},
      {"BRAID_DEBUG_FILE", "",
       "Write the log to this file instead of stderr; %h is replaced by the host name, %p by the pid."},
      {"BRAID_CUDA_MODULE", "",
       "Path of libbraid-cuda.so (the CUDA module) when it is not next to libbraid.so."},
      {"BRAID_CUDA_CHUNK_BYTES", "0",
       "Device buffers are staged through page-locked host memory; all-reduce, broadcast and reduce are cut "
       "into pieces of this many bytes so that copying one piece overlaps the collective on another. 0: "
       "an eighth of the call, between 1 MiB and 8 MiB. Must be the same on every rank."},
      {"BRAID_CUDA_DEVICE_CODEC", "1",
       "Quantized all-to-all and all-gather on device buffers encode and decode on the GPU, so only wire "
       "bytes are staged; 0 stages the values and codes them on the CPU. Must be the same on every rank."},
      {"BRAID_CUDA_FLAG_WAIT", "",
       "How a CUDA stream bound with braidStreamWrapCuda waits for a collective: unset uses "
       "cuStreamWaitValue32 where the driver offers it, hostfn a host function that polls (for tests)."},
      {"BRAID_TIMEOUT_MS", "300000",
       "Deadline in milliseconds for init and for every wait inside an operation."},
      {"BRAID_NSOCKS", "0",
       "TCP sockets per peer connection (1..16); large messages are striped across them. 0: 1 to peers on "
       "this host, 2 to others."},
      {"BRAID_SOCKET_IFNAME", "",
       "Network interface for TCP (a prefix such as eth or ^lo to exclude; =eth0 for an exact name). "
       "Default: first non-loopback interface that is up, else loopback."},
      {"BRAID_SOCKET_FAMILY", "", "Force AF_INET or AF_INET6 for interface selection."},
      {"BRAID_SOCKET_TC", "-1",
       "TCP: the traffic class of every socket's packets (0-255, the IP TOS / IPv6 traffic class byte: "
       "DSCP << 2, e.g. 184 for EF), so that the fabric can queue collectives apart. -1: the system's "
       "default. In the NCCL net plugin a v11 communicator's trafficClass takes its place."},
      {"BRAID_TRANSPORT", "",
       "Force the transport for every pair (tcp, shm, ucx, netplugin, ibverbs). Default: shm between ranks "
       "of one host, tcp across hosts."},
      {"BRAID_NET", "tcp",
       "The transport between ranks of different hosts: tcp, ucx (UCX picks the fabric: InfiniBand, RoCE, "
       "TCP), netplugin (an NCCL net plugin, BRAID_NET_PLUGIN) or ibverbs (RDMA on InfiniBand or RoCE "
       "ports). Ranks of one host still use shm. Must be the same on every rank."},
      {"BRAID_NET_PLUGIN", "",
       "The NCCL net plugin the netplugin transport loads: a path, or N for libnccl-net-N.so on the library "
       "path (as NCCL_NET_PLUGIN), e.g. braid or aws-ofi-nccl's. Its own variables steer it."},
      {"BRAID_MAX_MESSAGE_BYTES", "0",
       "The largest message braid hands a transport; larger transfers go as several. 0: each transport's "
       "own limit (ibverbs 4 GiB - 1, netplugin the plugin's maxP2pBytes up to 1 GiB, others none); else at "
       "least 4096. A pair of ranks cuts at the smaller of its two ends' limits."},
      {"BRAID_NET_PLUGIN_VERSION", "0",
       "Which of the plugin's tables the netplugin transport uses: 8 to 11 for ncclNetPlugin_v8 to _v11. 0: "
       "the newest it exports, as NCCL takes it."},
      {"BRAID_NCCL_NET", "tcp",
       "The transport libnccl-net-braid.so (braid's NCCL net plugin) carries NCCL's traffic over: tcp or "
       "ucx."},
      {"BRAID_LIBRARY", "libbraid.so.0",
       "The library the torch.distributed backend (plugins/torch, import braid_torch) loads: a path, or a "
       "name the dynamic loader finds."},
      {"BRAID_IB_HCA", "",
       "ibverbs: the RDMA ports to use, comma-separated device names or device:port (as NCCL_IB_HCA without "
       "its prefixes). Default: every active port."},
      {"BRAID_IB_GID_INDEX", "",
       "ibverbs on RoCE: the GID table entry to address by. Default: 3 where it is set (RoCE v2 over IPv4 on "
       "the usual tables), else 0."},
      {"BRAID_IB_TC", "0",
       "ibverbs: the traffic class of every queue pair's packets (0-255; as NCCL_IB_TC). On RoCE it is "
       "DSCP << 2: what puts RDMA in the fabric's lossless priority."},
      {"BRAID_IB_SL", "0", "ibverbs: the InfiniBand service level (0-15; as NCCL_IB_SL)."},
      {"BRAID_IB_TIMEOUT", "14",
       "ibverbs: the retransmission timeout, 4.096 us * 2^value (1-31; 14: 67 ms; as NCCL_IB_TIMEOUT)."},
      {"BRAID_IB_RETRY_CNT", "7",
       "ibverbs: retransmissions before a connection fails (0-7; as NCCL_IB_RETRY_CNT)."},
      {"BRAID_IB_LIBRARY", "libibverbs.so.1",
       "The verbs library the ibverbs transport opens (a path, for an rdma-core other than the system's)."},
      {"BRAID_UCX_LIBRARY", "libucp.so.0",
       "The UCX library the ucx transport opens (a path, for a UCX other than the system's). UCX's own "
       "UCX_* variables (UCX_TLS, UCX_NET_DEVICES, ...) choose what it runs over."},
      {"BRAID_SHM_RING_BYTES", "1048576",
       "Bytes of each shm connection's ring (power of two, 65536..268435456); small messages, and large ones "
       "when cross-memory attach is off, stream through it."},
      {"BRAID_SHM_CMA_THRESHOLD", "32768",
       "Messages of at least this many bytes move single-copy with cross-memory attach: pulled by the "
       "receiver (process_vm_readv), or pushed by a sender with fewer copies ahead than its receiver "
       "(process_vm_writev; a gather's root's peers); 0 turns it off. Falls back to the ring per connection "
       "when the kernel refuses (EPERM)."},
      {"BRAID_SHM_PUSH", "1",
       "1: a sender with fewer large copies ahead than its receiver, or as many as a receiver busy with a "
       "local step, pushes into the receive the receiver offered (a gather's peers into the root's output, "
       "in parallel); 0: receivers pull every large message."},
      {"BRAID_SHM_SLOT_BYTES", "262144",
       "When every rank of a communicator is on one host, collectives run on a shared area of two slots "
       "of this many bytes per rank instead of through the transports: whole when a rank's input fits a "
       "slot and 16 KiB, all-reduces, all-gathers, reduce-scatters, broadcasts and all-to-alls beyond that "
       "in chunks of a slot (0 turns it off; at most 1048576). The size is rank 0's; a rank with 0, or with "
       "BRAID_TRANSPORT forcing another transport, turns them off for all."},
      {"BRAID_SHM_STREAM_BYTES", "0",
       "Collectives on the shared slots write outputs of at least this many bytes with streaming stores, "
       "which bypass the caches: a plain copy first reads every line it writes, a third of the memory "
       "traffic once outputs outgrow the cache. 0: the last-level cache divided by twice the ranks of "
       "the host, when every rank's input and output together fill it (auto); negative: never."},
      {"BRAID_SHM_PULL_BYTES", "65536",
       "All-to-alls (and all-gathers of 2 ranks) on the shared slots whose blocks are at least this many "
       "bytes, and whose outputs fit the cache's share of BRAID_SHM_STREAM_BYTES's auto, are pulled: every "
       "rank reads what it needs of every peer's input with process_vm_readv, one copy, where others go "
       "through the slots in two. 0 turns it off. Rank 0's value for all; a rank with 0, or a pair of ranks "
       "the kernel refuses cross-memory reads, turns it off for all."},
      {"BRAID_SHM_SPIN_US", "20",
       "Microseconds a waiting rank spins on a shm connection, yielding the CPU, before it sleeps on its "
       "futex doorbell."},
      {"BRAID_HEARTBEAT_MS", "1000",
       "Period of each communicator's liveness heartbeat between every rank and rank 0 (a light control "
       "connection, off the data path); 0 turns heartbeats off (faults are still told to every rank)."},
      {"BRAID_HEARTBEAT_MISSES", "10",
       "A rank silent for this many heartbeat periods is suspected (its communicator fails with braidTimeout "
       "on every rank). Generous by default so that a loaded machine never misfires."},
      {"BRAID_FAULT_INJECT", "",
       "For tests only: rank=R,op=N,kind=close-socket|corrupt-header|kill|stop[,peer=P] breaks rank R's link "
       "to P (default R+1) or the process as its communicator's N-th op starts."},
      {"BRAID_ALGO", "", "Force algorithms, e.g. allreduce:ring;broadcast:chain."},
      {"BRAID_CHUNK_BYTES", "",
       "Pipeline chunk size in bytes for chunked algorithms; unset: the tuner picks per call (32 KiB..1 "
       "MiB)."},
      {"BRAID_LINK_ALPHA_US", "70",
       "Per-message latency of a network link in microseconds, for the tuner's cost model."},
      {"BRAID_LINK_BETA_GBPS", "1.5",
       "Network link bandwidth in GB/s for the tuner's cost model; 0 turns the model off (fixed table)."},
      {"BRAID_LINK_INTRA_ALPHA_US", "4",
       "Per-message latency in microseconds between ranks of one host over shared memory, for the tuner."},
      {"BRAID_LINK_INTRA_GBPS", "5",
       "Bandwidth in GB/s between ranks of one host over shared memory, for the tuner's cost model."},
      {"BRAID_REDUCE_GBPS", "10", "Reduction throughput in GB/s for the tuner's cost model."},
      {"BRAID_TRACE_BUFFER_SIZE", "1024",
       "Operations each communicator's flight recorder keeps (dumped on failure, SIGUSR1 or "
       "braidCommDumpTrace)."},
      {"BRAID_TRACE_DIR", "",
       "Directory for flight-recorder dumps; when set, every rank writes one when an operation fails or on "
       "SIGUSR1."},
      {"BRAID_TOPO_FILE", "",
       "Read this host's topology from a braid topology file (src/topo/FORMAT.md) instead of detecting it; "
       "in a file with several hosts, the one whose hostId equals this host's id (BRAID_HOSTID)."},
      {"BRAID_TOPO_DUMP_FILE", "",
       "Write this host's detected (or loaded) topology to this file, in the BRAID_TOPO_FILE format."},
      {"BRAID_BIND", "",
       "Unset: each rank's engine (stream) threads keep to its own share of the CPUs it shares with the "
       "host's other ranks, when there are at least as many CPUs as ranks (never beyond the process's "
       "affinity). 1: bind them to the CPUs of the NUMA node nearest their NIC instead. 0: never bind."},
      {"BRAID_RANK", "", "Rank of this process for braidCommInitFromEnv (set by braid-run)."},
      {"BRAID_WORLD_SIZE", "", "Number of ranks for braidCommInitFromEnv (set by braid-run)."},
      {"BRAID_ROOT_ADDR", "",
       "host:port of the rendezvous root for braidCommInitFromEnv (set by braid-run)."},
      {"BRAID_HOSTID", "",
       "Host identity override: ranks with the same value count as one host (default: hostname and boot "
       "id)."},
      {"BRAID_SECRET", "",
       "32 hex digits shared by the ranks of braidCommInitFromEnv; a connection that cannot prove it is "
       "refused."},
  };
  return vars;
}

static const Variable* find(const char* name) {
  for (const Variable& v : all())
    if (std::strcmp(v.name, name) == 0) return &v;
  return nullptr;
}

std::optional<std::string> raw(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string getString(const char* name) {
  if (auto value = raw(name)) return *value;
  const Variable* v = find(name);
  return v ? v->defaultValue : "";
}

int64_t getInt(const char* name, std::string* error) {
  const Variable* v = find(name);
  const char* fallback = v ? v->defaultValue : "0";
  int64_t dflt = std::strtoll(fallback, nullptr, 10);
  auto value = raw(name);
  if (!value || value->empty()) return dflt;
  char* end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(value->c_str(), &end, 10);
  if (errno != 0 || end == value->c_str() || *end != '\0') {
    std::string msg = std::string(name) + "='" + *value + "' is not an integer; using " + fallback;
    if (error) *error = msg;
    BRAID_WARN("%s", msg.c_str());
    return dflt;
  }
  return parsed;
}

bool getBool(const char* name) {
  std::string value = getString(name);
  return value == "1" || value == "true" || value == "yes" || value == "on";
}

}  // namespace braid::env
