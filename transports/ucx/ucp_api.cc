#include "transports/ucx/ucp_api.h"

#include <dlfcn.h>

#include <mutex>

#include "base/env.h"

namespace braid::ucx {
namespace {

struct Loaded {
  UcpApi api{};
  std::string whyNot;  // empty when api is complete
};

template <typename Fn>
bool resolve(void* lib, const char* name, Fn* out, std::string* whyNot) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*out == nullptr && whyNot->empty())
    *whyNot = std::string("libucp lacks ") + name + " (UCX older than 1.10?)";
  return *out != nullptr;
}

Loaded load() {
  Loaded l;
  // BRAID_UCX_LIBRARY may name another libucp (a UCX built from source).
  std::string path = env::getString("BRAID_UCX_LIBRARY");
  // RTLD_LOCAL: UCX's symbols stay out of the global namespace, so a program
  // that links its own UCX (an MPI) keeps resolving to that one.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    l.whyNot = "cannot load " + path + " (install libucx0): " + (err ? err : "unknown dlopen error");
    return l;
  }
  std::string& why = l.whyNot;
  UcpApi& a = l.api;
  resolve(lib, "ucp_get_version", &a.getVersion, &why);
  resolve(lib, "ucp_config_read", &a.configRead, &why);
  resolve(lib, "ucp_config_release", &a.configRelease, &why);
  resolve(lib, "ucp_init_version", &a.initVersion, &why);
  resolve(lib, "ucp_cleanup", &a.cleanup, &why);
  resolve(lib, "ucp_worker_create", &a.workerCreate, &why);
  resolve(lib, "ucp_worker_destroy", &a.workerDestroy, &why);
  resolve(lib, "ucp_worker_progress", &a.workerProgress, &why);
  resolve(lib, "ucp_worker_get_efd", &a.workerGetEfd, &why);
  resolve(lib, "ucp_worker_arm", &a.workerArm, &why);
  resolve(lib, "ucp_listener_create", &a.listenerCreate, &why);
  resolve(lib, "ucp_listener_destroy", &a.listenerDestroy, &why);
  resolve(lib, "ucp_listener_query", &a.listenerQuery, &why);
  resolve(lib, "ucp_listener_reject", &a.listenerReject, &why);
  resolve(lib, "ucp_conn_request_query", &a.connRequestQuery, &why);
  resolve(lib, "ucp_ep_create", &a.epCreate, &why);
  resolve(lib, "ucp_ep_close_nbx", &a.epCloseNbx, &why);
  resolve(lib, "ucp_ep_flush_nbx", &a.epFlushNbx, &why);
  resolve(lib, "ucp_tag_send_nbx", &a.tagSendNbx, &why);
  resolve(lib, "ucp_tag_recv_nbx", &a.tagRecvNbx, &why);
  resolve(lib, "ucp_tag_recv_request_test", &a.tagRecvRequestTest, &why);
  resolve(lib, "ucp_stream_send_nbx", &a.streamSendNbx, &why);
  resolve(lib, "ucp_stream_recv_nbx", &a.streamRecvNbx, &why);
  resolve(lib, "ucp_request_check_status", &a.requestCheckStatus, &why);
  resolve(lib, "ucp_request_cancel", &a.requestCancel, &why);
  resolve(lib, "ucp_request_free", &a.requestFree, &why);
  // libucs, a dependency of libucp: found through the handle's dependencies.
  resolve(lib, "ucs_status_string", &a.statusString, &why);
  // The library stays loaded for the life of the process: UCX's own threads
  // and atexit handlers may still run after the last transport is gone.
  return l;
}

}  // namespace

const UcpApi* loadUcp(std::string* whyNot) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.whyNot.empty()) {
    if (whyNot) *whyNot = loaded.whyNot;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace braid::ucx
