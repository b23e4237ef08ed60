// Status: braid's error value. Every layer below the C API returns one instead
// of throwing; src/api turns it into a braidResult_t and stores the message as
// the communicator's last error. A Status carries the code, a message that says
// what went wrong and what to do, and (where relevant) the errno and peer rank.
#pragma once

#include <cerrno>
#include <memory>
#include <string>
#include <utility>

namespace braid {

// Mirrors braidResult_t one to one (checked by a static_assert in src/api).
enum class Code : int {
  kOk = 0,
  kCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
  kTimeout = 8,
  kAborted = 9,
  kNotSupported = 10,
};

const char* codeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : code_(code),
        message_(code == Code::kOk && message.empty() ? nullptr
                                                      : std::make_unique<std::string>(std::move(message))) {}
  Status(const Status& other)
      : code_(other.code_),
        message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == Code::kOk; }
  explicit operator bool() const { return isOk(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : emptyMessage(); }

  // Adds context in front of the message: "while X: <original>".
  Status& prefix(const std::string& context) {
    if (!isOk()) message_ = std::make_unique<std::string>(context + ": " + message());
    return *this;
  }

 private:
  static const std::string& emptyMessage();

  // A success is one word of code and a null pointer: it is made, returned and
  // checked on every call of the hot path, so it must cost next to nothing.
  // Only a failure carries a message (on the heap).
  Code code_ = Code::kOk;
  std::unique_ptr<std::string> message_;
};

// Helpers that read well at the call site.
inline Status invalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status invalidUsage(std::string m) { return {Code::kInvalidUsage, std::move(m)}; }
inline Status internalError(std::string m) { return {Code::kInternalError, std::move(m)}; }
inline Status remoteError(std::string m) { return {Code::kRemoteError, std::move(m)}; }
inline Status timeoutError(std::string m) { return {Code::kTimeout, std::move(m)}; }
inline Status notSupported(std::string m) { return {Code::kNotSupported, std::move(m)}; }
inline Status abortedError(std::string m) { return {Code::kAborted, std::move(m)}; }
// "what: strerror(err) (errno N)". Pass errno explicitly: callers read it first.
Status systemError(const std::string& what, int err);

}  // namespace braid

// Returns early from the enclosing function when expr is not ok.
#define BRAID_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::braid::Status _braid_st = (expr);      \
    if (!_braid_st.isOk()) return _braid_st; \
  } while (0)
