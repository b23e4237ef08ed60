#include "transports/ibverbs/verbs_api.h"

#include <dlfcn.h>

#include <mutex>

#include "base/env.h"

namespace braid::ibverbs {
namespace {

struct Loaded {
  VerbsApi api{};
  std::string whyNot;  // empty when api is complete
};

template <typename Fn>
void resolve(void* lib, const char* name, Fn* out, std::string* whyNot) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*out == nullptr && whyNot->empty()) *whyNot = "the verbs library lacks " + std::string(name);
}

Loaded load() {
  Loaded l;
  std::string path = env::getString("BRAID_IB_LIBRARY");
  if (path.empty()) path = "libibverbs.so.1";
  // RTLD_LOCAL: a program that links its own rdma-core keeps resolving to it.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    l.whyNot = "cannot load " + path + " (install libibverbs1): " + (err ? err : "unknown dlopen error");
    return l;
  }
  VerbsApi& a = l.api;
  std::string& why = l.whyNot;
  resolve(lib, "ibv_get_device_list", &a.getDeviceList, &why);
  resolve(lib, "ibv_free_device_list", &a.freeDeviceList, &why);
  resolve(lib, "ibv_get_device_name", &a.getDeviceName, &why);
  resolve(lib, "ibv_open_device", &a.openDevice, &why);
  resolve(lib, "ibv_close_device", &a.closeDevice, &why);
  resolve(lib, "ibv_query_device", &a.queryDevice, &why);
  resolve(lib, "ibv_query_port", &a.queryPort, &why);
  resolve(lib, "ibv_query_gid", &a.queryGid, &why);
  resolve(lib, "ibv_alloc_pd", &a.allocPd, &why);
  resolve(lib, "ibv_dealloc_pd", &a.deallocPd, &why);
  resolve(lib, "ibv_reg_mr", &a.regMr, &why);
  resolve(lib, "ibv_dereg_mr", &a.deregMr, &why);
  resolve(lib, "ibv_create_cq", &a.createCq, &why);
  resolve(lib, "ibv_destroy_cq", &a.destroyCq, &why);
  resolve(lib, "ibv_create_qp", &a.createQp, &why);
  resolve(lib, "ibv_modify_qp", &a.modifyQp, &why);
  resolve(lib, "ibv_destroy_qp", &a.destroyQp, &why);
  resolve(lib, "ibv_wc_status_str", &a.wcStatusStr, &why);
  a.library = path;
  // Never closed: providers keep threads and handlers for the process's life.
  return l;
}

}  // namespace

const VerbsApi* loadVerbs(std::string* whyNot) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.whyNot.empty()) {
    if (whyNot) *whyNot = loaded.whyNot;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace braid::ibverbs
