#include "core/ipc_workspaces.h"

#include <unistd.h>

#include "base/log.h"
#include "core/device_pools.h"

namespace braid::core {

IpcWorkspaces::~IpcWorkspaces() {
  DeviceScope scope(m_, device_);
  for (size_t r = 0; r < bases_.size(); ++r)
    if (opened_[r]) (void)m_.ipcCloseHandle(bases_[r]);
  if (mine_) (void)m_.release(mine_);
}

Status buildMinOp(Communicator& comm, int32_t* value, Op* op) {
  algo::CollectiveArgs args = comm.argsFor(algo::Collective::kAllReduce);
  args.count = 1;
  args.dtype = DataType::kInt32;
  args.op = RedOp::kMin;
  return comm.buildCollective(args, value, value, op);
}

Status IpcWorkspaces::allGather(Communicator& comm, const Record& mine, std::vector<Record>* all) {
  all->assign(comm.nranks(), Record{});
  algo::CollectiveArgs args = comm.argsFor(algo::Collective::kAllGather);
  args.count = sizeof(Record);
  args.dtype = DataType::kUint8;
  Op op;
  BRAID_RETURN_IF_ERROR(comm.buildCollective(args, &mine, all->data(), &op));
  return comm.runInline(op);
}

Status IpcWorkspaces::agree(Communicator& comm, bool ok, bool* everyone) {
  int32_t vote = ok ? 1 : 0;
  Op op;
  BRAID_RETURN_IF_ERROR(buildMinOp(comm, &vote, &op));
  BRAID_RETURN_IF_ERROR(comm.runInline(op));
  *everyone = vote == 1;
  return Status::ok();
}

Status IpcWorkspaces::setUp(Communicator& comm, size_t halfBytes) {
  const int n = comm.nranks(), me = comm.rank();
  halfBytes_ = halfBytes;
  Record mine{};
  mine.pid = static_cast<int32_t>(getpid());
  std::string why;
  {
    DeviceScope scope(m_, device_);
    void* p = nullptr;
    // The kernels the workers will launch, loaded here on the calling thread.
    int err = scope.status().isOk() ? m_.preloadKernels() : -1;
    if (err != 0 && scope.status().isOk())
      why = std::string("loading the reduction kernels: ") + m_.errorString(err);
    if (err == 0) err = m_.alloc(&p, 2 * halfBytes);
    if (err == 0) {
      mine_ = static_cast<uint8_t*>(p);
      mine.base = reinterpret_cast<uintptr_t>(p);
      err = m_.ipcGetHandle(p, mine.handle);
      if (err != 0) why = std::string("cudaIpcGetMemHandle: ") + m_.errorString(err);
    } else if (why.empty()) {
      why = scope.status().isOk() ? std::string("cudaMalloc of the workspace: ") + m_.errorString(err)
                                  : scope.status().message();
    }
    mine.exported = err == 0 ? 1 : 0;
  }
  std::vector<Record> all;
  BRAID_RETURN_IF_ERROR(allGather(comm, mine, &all));
  bool ok = true;
  for (int r = 0; r < n && ok; ++r)
    if (!all[r].exported) {
      ok = false;
      if (why.empty()) why = "rank " + std::to_string(r) + " could not export a workspace";
    }
  bases_.assign(n, nullptr);
  opened_.assign(n, false);
  if (ok) {
    DeviceScope scope(m_, device_);
    for (int r = 0; r < n && ok; ++r) {
      if (r == me || all[r].pid == mine.pid) {
        bases_[r] = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(all[r].base));
        continue;
      }
      void* p = nullptr;
      if (int err = m_.ipcOpenHandle(all[r].handle, &p); err != 0) {
        ok = false;
        why = "cudaIpcOpenMemHandle of rank " + std::to_string(r) + "'s workspace: " + m_.errorString(err);
        break;
      }
      bases_[r] = static_cast<uint8_t*>(p);
      opened_[r] = true;
    }
  }
  bool everyone = false;
  BRAID_RETURN_IF_ERROR(agree(comm, ok, &everyone));
  usable_ = everyone;
  if (!usable_) {
    reason_ = why.empty() ? "another rank could not map this rank's workspace" : why;
    BRAID_INFO("device buffers: collectives stage through host memory (no CUDA IPC between the ranks: %s)",
               reason_.c_str());
  } else {
    BRAID_INFO(
        "device buffers: collectives go device to device over CUDA IPC (%d ranks, %zu-byte workspace halves)",
        n, halfBytes_);
  }
  return Status::ok();
}

}  // namespace braid::core
