// UCX's UCP API, reached through dlopen so that libbraid.so loads and runs on
// hosts without UCX (the same promise the CUDA module keeps). braid is built
// against UCX's headers (the function types below come from them), and opens
// libucp.so.0 the first time a UCX transport is created.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace braid::ucx {

struct UcpApi {
  decltype(&::ucp_get_version) getVersion;
  decltype(&::ucp_config_read) configRead;
  decltype(&::ucp_config_release) configRelease;
  decltype(&::ucp_init_version) initVersion;
  decltype(&::ucp_cleanup) cleanup;
  decltype(&::ucp_worker_create) workerCreate;
  decltype(&::ucp_worker_destroy) workerDestroy;
  decltype(&::ucp_worker_progress) workerProgress;
  decltype(&::ucp_worker_get_efd) workerGetEfd;
  decltype(&::ucp_worker_arm) workerArm;
  decltype(&::ucp_listener_create) listenerCreate;
  decltype(&::ucp_listener_destroy) listenerDestroy;
  decltype(&::ucp_listener_query) listenerQuery;
  decltype(&::ucp_listener_reject) listenerReject;
  decltype(&::ucp_conn_request_query) connRequestQuery;
  decltype(&::ucp_ep_create) epCreate;
  decltype(&::ucp_ep_close_nbx) epCloseNbx;
  decltype(&::ucp_ep_flush_nbx) epFlushNbx;
  decltype(&::ucp_tag_send_nbx) tagSendNbx;
  decltype(&::ucp_tag_recv_nbx) tagRecvNbx;
  decltype(&::ucp_tag_recv_request_test) tagRecvRequestTest;
  decltype(&::ucp_stream_send_nbx) streamSendNbx;
  decltype(&::ucp_stream_recv_nbx) streamRecvNbx;
  decltype(&::ucp_request_check_status) requestCheckStatus;
  decltype(&::ucp_request_cancel) requestCancel;
  decltype(&::ucp_request_free) requestFree;
  decltype(&::ucs_status_string) statusString;
};

// The loaded API, or nullptr with *whyNot saying what is missing (no
// libucp.so.0 on this host, or one without a function braid needs). Loaded
// once per process; thread-safe.
const UcpApi* loadUcp(std::string* whyNot);

}  // namespace braid::ucx
