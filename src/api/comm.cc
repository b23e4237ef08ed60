// C entry points of the communicator's lifecycle.
#include <braid/braid.h>

#include <cstring>

#include "api/handles.h"
#include "api/validate.h"
#include "base/log.h"
#include "core/bootstrap/root.h"
#include "core/comm_split.h"
#include "core/launcher_env.h"

using braid::Status;
namespace api = braid::api;
namespace core = braid::core;
namespace bootstrap = braid::bootstrap;

namespace {

// Applies a user config on top of the environment's defaults.
Status configFrom(const braidConfig_t* config, core::CommConfig* out) {
  BRAID_RETURN_IF_ERROR(core::CommConfig::fromEnvironment(out));
  if (config == nullptr) return Status::ok();
  if (config->magic != BRAID_CONFIG_MAGIC || config->size < offsetof(braidConfig_t, socketIfname) + sizeof(char*) ||
      config->version == 0 || config->version > BRAID_CONFIG_VERSION)
    return braid::invalidArgument(
        "config was not initialised with BRAID_CONFIG_INITIALIZER (bad size, magic or version)");
  if (config->timeoutMs == 0) return braid::invalidArgument("config->timeoutMs is 0; use >0, or <0 for the default");
  if (config->timeoutMs > 0) out->timeoutMs = config->timeoutMs;
  if (config->nSocks > 16) return braid::invalidArgument("config->nSocks = " + std::to_string(config->nSocks) + " > 16");
  if (config->nSocks > 0) out->nSocks = config->nSocks;
  if (config->socketIfname) out->socketIfname = config->socketIfname;
  return Status::ok();
}

Status initRank(braidComm_t* comm, int nranks, const braidUniqueId& uid, int rank,
                const braidConfig_t* config) {
  const char* fn = "braidCommInitRank";
  if (comm == nullptr) return braid::invalidArgument(std::string(fn) + ": comm is NULL");
  *comm = nullptr;
  if (nranks <= 0) return braid::invalidArgument(std::string(fn) + ": nranks = " + std::to_string(nranks) + " must be positive");
  BRAID_RETURN_IF_ERROR(api::checkRank(fn, "rank", rank, nranks));
  bootstrap::UniqueId id;
  BRAID_RETURN_IF_ERROR(bootstrap::UniqueId::unpack(reinterpret_cast<const uint8_t*>(uid.internal), &id));
  core::CommConfig cfg;
  BRAID_RETURN_IF_ERROR(configFrom(config, &cfg));
  auto handle = std::make_unique<braidComm>();
  BRAID_RETURN_IF_ERROR(core::Communicator::create(nranks, id, rank, cfg, &handle->impl));
  *comm = handle.release();
  return Status::ok();
}

Status initFromEnv(braidComm_t* comm, const braidConfig_t* config) {
  if (comm == nullptr) return braid::invalidArgument("braidCommInitFromEnv: comm is NULL");
  *comm = nullptr;
  core::LauncherEnv env;
  BRAID_RETURN_IF_ERROR(core::readLauncherEnv(&env));
  bootstrap::UniqueId id;
  BRAID_RETURN_IF_ERROR(braid::net::parseAddress(env.rootAddress, &id.root));
  if (env.hasSecret) {
    id.secret = env.secret;
  } else if (env.rank == 0) {
    BRAID_WARN("braidCommInitFromEnv: BRAID_SECRET is not set, so anyone who can reach %s can join "
               "(braid-run sets it; with other launchers export the same 32 hex digits to every rank)",
               env.rootAddress.c_str());
  }
  core::CommConfig cfg;
  BRAID_RETURN_IF_ERROR(configFrom(config, &cfg));
  if (env.rank == 0) {
    bootstrap::RootOptions options;
    options.nranks = env.nranks;
    options.idleTimeoutMs = cfg.timeoutMs;
    BRAID_RETURN_IF_ERROR(bootstrap::startRootAt(id.root, id.secret, options));
  }
  auto handle = std::make_unique<braidComm>();
  BRAID_RETURN_IF_ERROR(core::Communicator::create(env.nranks, id, env.rank, cfg, &handle->impl));
  *comm = handle.release();
  return Status::ok();
}

}  // namespace

extern "C" {

braidResult_t braidGetUniqueId(braidUniqueId* uniqueId) {
  if (uniqueId == nullptr) return api::report(nullptr, braid::invalidArgument("braidGetUniqueId: uniqueId is NULL"));
  core::CommConfig cfg;
  Status st = core::CommConfig::fromEnvironment(&cfg);
  bootstrap::UniqueId id;
  if (st.isOk()) {
    bootstrap::RootOptions options;
    options.idleTimeoutMs = cfg.timeoutMs;
    st = bootstrap::startRoot(cfg.socketIfname, &id, options);
  }
  if (!st.isOk()) return api::report(nullptr, st);
  std::memset(uniqueId->internal, 0, sizeof(uniqueId->internal));
  id.pack(reinterpret_cast<uint8_t*>(uniqueId->internal));
  return braidSuccess;
}

braidResult_t braidCommInitRank(braidComm_t* comm, int nranks, braidUniqueId uniqueId, int rank) {
  return api::report(nullptr, initRank(comm, nranks, uniqueId, rank, nullptr));
}

braidResult_t braidCommInitRankConfig(braidComm_t* comm, int nranks, braidUniqueId uniqueId, int rank,
                                      braidConfig_t* config) {
  return api::report(nullptr, initRank(comm, nranks, uniqueId, rank, config));
}

braidResult_t braidCommInitFromEnv(braidComm_t* comm, braidConfig_t* config) {
  return api::report(nullptr, initFromEnv(comm, config));
}

braidResult_t braidCommFinalize(braidComm_t comm) {
  Status st = api::checkComm("braidCommFinalize", comm);
  if (st.isOk()) st = comm->impl->finalize();
  return api::report(comm, st);
}

braidResult_t braidCommDestroy(braidComm_t comm) {
  Status st = api::checkComm("braidCommDestroy", comm);
  if (!st.isOk()) return api::report(nullptr, st);
  st = comm->impl->drain();
  if (!st.isOk()) comm->impl->abort();  // queued work would never finish: stop it
  api::CommPin::release(comm);  // stream closures still queued hold their own reference
  return api::report(nullptr, st);
}

braidResult_t braidCommAbort(braidComm_t comm) {
  Status st = api::checkComm("braidCommAbort", comm);
  if (!st.isOk()) return api::report(nullptr, st);
  comm->impl->abort();
  api::CommPin::release(comm);  // a call still inside on another thread frees it when it returns
  return braidSuccess;
}

braidResult_t braidCommGetAsyncError(braidComm_t comm, braidResult_t* asyncError) {
  Status st = api::checkComm("braidCommGetAsyncError", comm);
  if (st.isOk() && asyncError == nullptr) st = braid::invalidArgument("braidCommGetAsyncError: asyncError is NULL");
  if (!st.isOk()) return api::report(comm, st);
  *asyncError = api::toResult(comm->impl->asyncError().code());
  return braidSuccess;
}

braidResult_t braidCommSplit(braidComm_t comm, int color, int key, braidComm_t* newcomm) {
  Status st = api::checkComm("braidCommSplit", comm);
  if (st.isOk() && newcomm == nullptr) st = braid::invalidArgument("braidCommSplit: newcomm is NULL");
  if (st.isOk() && color < BRAID_SPLIT_NOCOLOR)
    st = braid::invalidArgument("braidCommSplit: color " + std::to_string(color) + " is negative (use BRAID_SPLIT_NOCOLOR)");
  if (!st.isOk()) return api::report(comm, st);
  *newcomm = nullptr;
  auto handle = std::make_unique<braidComm>();
  st = core::splitCommunicator(*comm->impl, color, key, &handle->impl);
  if (st.isOk() && handle->impl) *newcomm = handle.release();
  return api::report(comm, st);
}

braidResult_t braidCommShrink(braidComm_t comm, const int* excludeRanks, int count, braidComm_t* newcomm) {
  const char* fn = "braidCommShrink";
  Status st = api::checkComm(fn, comm);
  if (st.isOk() && newcomm == nullptr) st = braid::invalidArgument("braidCommShrink: newcomm is NULL");
  if (st.isOk() && (count < 0 || (count > 0 && excludeRanks == nullptr)))
    st = braid::invalidArgument("braidCommShrink: excludeRanks is NULL or count is negative");
  std::vector<int> exclude;
  for (int i = 0; st.isOk() && i < count; ++i) {
    st = api::checkRank(fn, "excludeRanks[i]", excludeRanks[i], comm->impl->nranks());
    exclude.push_back(excludeRanks[i]);
  }
  if (!st.isOk()) return api::report(comm, st);
  *newcomm = nullptr;
  auto handle = std::make_unique<braidComm>();
  st = core::shrinkCommunicator(*comm->impl, exclude, &handle->impl);
  if (st.isOk()) *newcomm = handle.release();
  return api::report(comm, st);
}

braidResult_t braidCommDumpTrace(braidComm_t comm, const char* path) {
  Status st = api::checkComm("braidCommDumpTrace", comm);
  if (st.isOk()) st = comm->impl->dumpTrace(path ? path : "");
  return api::report(comm, st);
}

braidResult_t braidCommRegister(const braidComm_t comm, void* buff, size_t size, void** handle) {
  const char* fn = "braidCommRegister";
  api::CommPin pin(comm);  // a concurrent braidCommAbort frees the handle after this call
  Status st = api::checkComm(fn, comm);
  if (st.isOk() && handle == nullptr) st = braid::invalidArgument(std::string(fn) + ": handle is NULL");
  if (st.isOk() && buff == nullptr) st = braid::invalidArgument(std::string(fn) + ": buff is NULL");
  if (st.isOk() && size == 0) st = braid::invalidArgument(std::string(fn) + ": size is 0");
  if (st.isOk() && reinterpret_cast<uintptr_t>(buff) > UINTPTR_MAX - size)
    st = braid::invalidArgument(std::string(fn) + ": buff + size (" + std::to_string(size) +
                                " bytes) wraps around the address space");
  if (!st.isOk()) return api::report(comm, st);
  st = comm->impl->registerBuffer(buff, size, handle);
  if (!st.isOk()) st = Status(st.code(), std::string(fn) + ": " + st.message());
  return api::report(comm, st);
}

braidResult_t braidCommDeregister(const braidComm_t comm, void* handle) {
  const char* fn = "braidCommDeregister";
  api::CommPin pin(comm);  // a concurrent braidCommAbort frees the handle after this call
  Status st = api::checkComm(fn, comm);
  if (st.isOk() && handle == nullptr) st = braid::invalidArgument(std::string(fn) + ": handle is NULL");
  if (!st.isOk()) return api::report(comm, st);
  st = comm->impl->deregisterBuffer(handle);
  if (!st.isOk()) st = Status(st.code(), std::string(fn) + ": " + st.message());
  return api::report(comm, st);
}

braidResult_t braidCommCount(const braidComm_t comm, int* count) {
  Status st = api::checkComm("braidCommCount", comm);
  if (st.isOk() && count == nullptr) st = braid::invalidArgument("braidCommCount: count is NULL");
  if (!st.isOk()) return api::report(comm, st);
  *count = comm->impl->nranks();
  return braidSuccess;
}

braidResult_t braidCommUserRank(const braidComm_t comm, int* rank) {
  Status st = api::checkComm("braidCommUserRank", comm);
  if (st.isOk() && rank == nullptr) st = braid::invalidArgument("braidCommUserRank: rank is NULL");
  if (!st.isOk()) return api::report(comm, st);
  *rank = comm->impl->rank();
  return braidSuccess;
}

}  // extern "C"
