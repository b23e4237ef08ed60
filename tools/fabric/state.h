// What fabric remembers between invocations, under /run/braid-fabric/:
//   NAME.lock   flock(2)ed by whichever fabric process is working on NAME. A
//               `fabric run` holds it for its whole life; the kernel drops it
//               when that process dies, even by SIGKILL, which is how a later
//               invocation knows leftovers are stale rather than in use.
//   NAME.state  the spec and who made it: "up" (kept until `fabric down`) or
//               "run" (that run tears it down; if found later, it is stale).
// The namespaces themselves are found by name (see topology.h), so cleanup
// works even when the state file is lost.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "topology.h"

namespace braid::fabric {

struct FabricState {
  FabricSpec spec;
  std::string owner;  // "up" or "run"
  long pid = 0;       // the process that created it
};

// An exclusive hold on one fabric name, released by the destructor.
class FabricLock {
 public:
  // Non-blocking: fails (nullopt, *error says who holds it) when another
  // fabric process is working on the same name.
  static std::optional<FabricLock> tryAcquire(const std::string& name, std::string* error);

  FabricLock(FabricLock&& other) noexcept
      : fd_(other.fd_), path_(std::move(other.path_)), remove_(other.remove_) {
    other.fd_ = -1;
  }
  FabricLock(const FabricLock&) = delete;
  FabricLock& operator=(const FabricLock&) = delete;
  FabricLock& operator=(FabricLock&&) = delete;
  ~FabricLock();

  // Once the fabric is gone: delete the lock file on release, so nothing of
  // this fabric is left under /run. Safe against a waiting locker, which
  // checks after locking that the file it locked is still the one named.
  void removeOnRelease() { remove_ = true; }

 private:
  FabricLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  bool remove_ = false;
};

std::optional<FabricState> readState(const std::string& name);
bool writeState(const FabricState& state, std::string* error);
void removeState(const std::string& name);

// "key=value" lines (pure; what writeState writes and readState parses).
std::string formatState(const FabricState& state);
std::optional<FabricState> parseState(const std::string& text);

}  // namespace braid::fabric
