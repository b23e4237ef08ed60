// libibverbs, reached through dlopen so that libbraid.so loads and runs on
// hosts without rdma-core (the promise UCX and the CUDA module keep too).
// braid is built against rdma-core's headers and opens libibverbs.so.1 the
// first time an ibverbs transport is created; BRAID_IB_LIBRARY may name
// another library with the same entry points (the tests' in-process fabric).
//
// ibv_post_send, ibv_post_recv and ibv_poll_cq are verbs.h's inline calls
// through the device context's ops, which the library that opened the device
// filled; everything else goes through this table.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace braid::ibverbs {

struct VerbsApi {
  // The exact types of the exported functions (a call through a pointer of
  // another type is undefined, and UBSan says so). Function-like macros of
  // verbs.h that share these names expand only when followed by "(".
  decltype(&::ibv_get_device_list) getDeviceList;
  decltype(&::ibv_free_device_list) freeDeviceList;
  decltype(&::ibv_get_device_name) getDeviceName;
  decltype(&::ibv_open_device) openDevice;
  decltype(&::ibv_close_device) closeDevice;
  decltype(&::ibv_query_device) queryDevice;
  // Fills the classic fields of ibv_port_attr (every field braid reads)
  // through verbs.h's compat type, so the caller zeroes the struct first.
  decltype(&::ibv_query_port) queryPort;
  decltype(&::ibv_query_gid) queryGid;
  decltype(&::ibv_alloc_pd) allocPd;
  decltype(&::ibv_dealloc_pd) deallocPd;
  decltype(&::ibv_reg_mr) regMr;
  decltype(&::ibv_dereg_mr) deregMr;
  decltype(&::ibv_create_cq) createCq;
  decltype(&::ibv_destroy_cq) destroyCq;
  decltype(&::ibv_create_qp) createQp;
  decltype(&::ibv_modify_qp) modifyQp;
  decltype(&::ibv_destroy_qp) destroyQp;
  decltype(&::ibv_wc_status_str) wcStatusStr;
  std::string library;  // the file it came from, for messages
};

// The loaded API, or nullptr with *whyNot saying what is missing. Loaded
// once per process; thread-safe.
const VerbsApi* loadVerbs(std::string* whyNot);

}  // namespace braid::ibverbs
