#include "api/validate.h"

#include <string>

namespace braid::api::failed {

static std::string in(const char* fn) { return std::string(fn) + ": "; }

Status comm(const char* fn) { return invalidArgument(in(fn) + "comm is NULL"); }

Status dataType(const char* fn, braidDataType_t dtype) {
  return invalidArgument(in(fn) + "datatype " + std::to_string(static_cast<int>(dtype)) +
                         " is not a braidDataType_t (0.." + std::to_string(kNumDataTypes - 1) + ")");
}

Status redOp(const char* fn, braidRedOp_t op) {
  return invalidArgument(in(fn) + "op " + std::to_string(static_cast<int>(op)) +
                         " is not a braidRedOp_t (0.." + std::to_string(kNumRedOps - 1) + ")");
}

Status bytes(const char* fn, const char* what, size_t count, braidDataType_t dtype, size_t multiple) {
  return invalidArgument(in(fn) + what + " = " + std::to_string(count) + " elements of " +
                         dataTypeName(static_cast<DataType>(dtype)) +
                         (multiple > 1 ? " x " + std::to_string(multiple) + " ranks" : "") +
                         " overflows the address space");
}

Status buffer(const char* fn, const char* name, size_t bytes) {
  return invalidArgument(in(fn) + name + " is NULL but " + std::to_string(bytes) + " bytes are needed");
}

Status rank(const char* fn, const char* name, int value, int nranks) {
  return invalidArgument(in(fn) + name + " = " + std::to_string(value) + " is outside [0, " +
                         std::to_string(nranks) + ")");
}

Status overlap(const char* fn, const char* inPlaceRule) {
  return invalidArgument(in(fn) + "sendbuff and recvbuff overlap without being in place (" + inPlaceRule +
                         ")");
}

}  // namespace braid::api::failed

namespace braid::api {

Status resolveMadeOp(const char* fn, braidComm_t comm, braidRedOp_t op, braidDataType_t dtype,
                     ResolvedOp* out) {
  if (static_cast<int>(op) < braidNumOps) return failed::redOp(fn, op);
  return comm->userOps.resolve(fn, op, static_cast<DataType>(dtype), out);
}

}  // namespace braid::api
