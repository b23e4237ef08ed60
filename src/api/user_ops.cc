#include "api/user_ops.h"

#include <climits>
#include <cstring>
#include <string>

#include "api/handles.h"
#include "api/validate.h"

namespace braid::api {

namespace {

std::string opName(braidRedOp_t op) { return "op " + std::to_string(static_cast<int>(op)); }

}  // namespace

Status UserRedOps::createPreMulSum(DataType dtype, uint64_t scalarBits, braidRedOp_t* op) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < entries_.size() && entries_[i].live) ++i;
  if (i == entries_.size()) {
    if (entries_.size() >= static_cast<size_t>(INT_MAX - braidNumOps))
      return invalidUsage("braidRedOpCreatePreMulSum: every op number of this communicator is in use");
    entries_.emplace_back();
  }
  entries_[i] = {true, dtype, scalarBits};
  *op = static_cast<braidRedOp_t>(braidNumOps + static_cast<int>(i));
  return Status::ok();
}

Status UserRedOps::destroy(const char* fn, braidRedOp_t op) {
  const int v = static_cast<int>(op);
  if (v >= 0 && v < braidNumOps)
    return invalidArgument(
        std::string(fn) + ": " + opName(op) +
        " is a built-in braidRedOp_t; only ops made by braidRedOpCreatePreMulSum are destroyed");
  std::lock_guard<std::mutex> lock(mu_);
  const size_t i = static_cast<size_t>(v) - braidNumOps;
  if (v < braidNumOps || i >= entries_.size() || !entries_[i].live)
    return invalidArgument(
        std::string(fn) + ": " + opName(op) +
        " was not made by braidRedOpCreatePreMulSum on this communicator (or is destroyed)");
  entries_[i].live = false;
  return Status::ok();
}

Status UserRedOps::resolve(const char* fn, braidRedOp_t op, DataType dtype, ResolvedOp* out) const {
  const int v = static_cast<int>(op);
  std::lock_guard<std::mutex> lock(mu_);
  const size_t i = static_cast<size_t>(v) - braidNumOps;
  if (v < braidNumOps || i >= entries_.size() || !entries_[i].live)
    return invalidArgument(std::string(fn) + ": " + opName(op) + " is neither a braidRedOp_t (0.." +
                           std::to_string(braidNumOps - 1) +
                           ") nor an op made by braidRedOpCreatePreMulSum on this communicator");
  const Entry& e = entries_[i];
  if (e.dtype != dtype)
    return invalidArgument(std::string(fn) + ": " + opName(op) + " is a PreMulSum of " +
                           dataTypeName(e.dtype) + ", called with datatype " + dataTypeName(dtype));
  out->op = RedOp::kSum;
  out->preMultiply = true;
  out->preMulScalar = e.scalarBits;
  return Status::ok();
}

}  // namespace braid::api

// ---- C entry points ---------------------------------------------------------

namespace {

braid::Status createPreMulSum(braidRedOp_t* op, const void* scalar, braidDataType_t datatype,
                              braidScalarResidence_t residence, braidComm_t comm) {
  const char* fn = "braidRedOpCreatePreMulSum";
  BRAID_RETURN_IF_ERROR(braid::api::checkComm(fn, comm));
  BRAID_RETURN_IF_ERROR(braid::api::checkDataType(fn, datatype));
  if (op == nullptr) return braid::invalidArgument(std::string(fn) + ": op is NULL");
  if (residence == braidScalarDevice)
    return braid::notSupported(
        std::string(fn) +
        ": a scalar in device memory (braidScalarDevice) is not supported in this version; "
        "pass its value with braidScalarHostImmediate");
  if (residence != braidScalarHostImmediate)
    return braid::invalidArgument(std::string(fn) + ": residence " +
                                  std::to_string(static_cast<int>(residence)) +
                                  " is not a braidScalarResidence_t");
  if (scalar == nullptr) return braid::invalidArgument(std::string(fn) + ": scalar is NULL");
  uint64_t bits = 0;
  std::memcpy(&bits, scalar, braid::dataTypeSize(static_cast<braid::DataType>(datatype)));
  return comm->userOps.createPreMulSum(static_cast<braid::DataType>(datatype), bits, op);
}

}  // namespace

extern "C" {

braidResult_t braidRedOpCreatePreMulSum(braidRedOp_t* op, void* scalar, braidDataType_t datatype,
                                        braidScalarResidence_t residence, braidComm_t comm) {
  braid::api::CommPin pin(comm);
  return braid::api::report(comm, createPreMulSum(op, scalar, datatype, residence, comm));
}

braidResult_t braidRedOpDestroy(braidRedOp_t op, braidComm_t comm) {
  braid::api::CommPin pin(comm);
  braid::Status st = braid::api::checkComm("braidRedOpDestroy", comm);
  if (st.isOk()) st = comm->userOps.destroy("braidRedOpDestroy", op);
  return braid::api::report(comm, st);
}

}  // extern "C"
