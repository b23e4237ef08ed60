#include "transports/netplugin/netplugin_listen.h"

#include "base/log.h"
#include "transports/netplugin/netplugin_comm.h"

namespace braid::netplugin {
NetPluginListenComm::NetPluginListenComm(const PluginLibrary* lib, void* pluginListen,
                                         const transport::Handle& mine, const transport::Options& options)
    : lib_(lib), listen_(pluginListen), mine_(mine), options_(options) {}

NetPluginListenComm::~NetPluginListenComm() {
  for (auto& u : unproven_) drop(*u, "");
  lib_->net().closeListen(listen_);
}

void NetPluginListenComm::drop(Unproven& u, const std::string& why) {
  if (!why.empty()) BRAID_WARN("netplugin listener: dropping a connection: %s", why.c_str());
  if (u.mhandle) lib_->net().deregMr(u.comm, u.mhandle);
  lib_->net().closeRecv(u.comm);
  u.comm = nullptr;
}

Status NetPluginListenComm::expectProof(Unproven& u) {
  const NetApi& net = lib_->net();
  if (!u.mhandle)
    BRAID_RETURN_IF_ERROR(
        statusOf(net.regMr(u.comm, u.proof, kProofBytes, NCCL_PTR_HOST, &u.mhandle), "regMr"));
  void* data = u.proof;
  size_t size = kProofBytes;
  int tag = kProofTag;
  return statusOf(net.irecv(u.comm, 1, &data, &size, &tag, &u.mhandle, &u.request), "irecv (proof)");
}

Status NetPluginListenComm::accept(std::unique_ptr<transport::RecvComm>* out, uint64_t* connectorId) {
  out->reset();
  const NetApi& net = lib_->net();
  void* comm = nullptr;
  BRAID_RETURN_IF_ERROR(statusOf(net.accept(listen_, &comm), "accept"));
  if (comm) {
    auto u = std::make_unique<Unproven>();
    u->comm = comm;
    u->deadline = Deadline(options_.handshakeTimeoutMs);
    if (Status st = expectProof(*u); !st.isOk())
      drop(*u, st.message());
    else
      unproven_.push_back(std::move(u));
  }
  for (size_t i = 0; i < unproven_.size(); ++i) {
    Unproven& u = *unproven_[i];
    std::string why;
    int done = 0, size = 0;
    if (!u.request) {
      if (Status st = expectProof(u); !st.isOk()) why = st.message();
    } else if (Status st = statusOf(net.test(u.request, &done, &size), "test (proof)"); !st.isOk()) {
      why = st.message();
    }
    uint64_t id = 0, nonce = 0;
    if (why.empty() && done) {
      Status proven = size == static_cast<int>(kProofBytes)
                          ? checkProof(options_.secret, mine_, u.proof, &id, &nonce)
                          : remoteError("its first message has " + std::to_string(size) +
                                        " bytes, not a proof's " + std::to_string(kProofBytes));
      if (proven.isOk() && !seenNonces_.insert(nonce).second)
        proven = remoteError("it replays a proof already used");
      if (!proven.isOk()) why = proven.message();
    }
    if (why.empty() && !done && u.deadline.expired())
      why = "no proof of the secret within the handshake deadline";
    if (!why.empty()) {
      drop(u, why);
      unproven_.erase(unproven_.begin() + static_cast<long>(i--));
      continue;
    }
    if (!done) continue;
    net.deregMr(u.comm, u.mhandle);
    *out = std::make_unique<NetPluginRecvComm>(lib_, u.comm, "connector " + std::to_string(id));
    *connectorId = id;
    unproven_.erase(unproven_.begin() + static_cast<long>(i));
    return Status::ok();
  }
  return Status::ok();
}

}  // namespace braid::netplugin
