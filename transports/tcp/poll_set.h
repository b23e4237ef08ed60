// PollSet: the live endpoints of one TcpTransport, so that wait() can poll
// every socket that has work pending. Shared (shared_ptr) between the transport
// and its comms, so either may be destroyed first. Used by one thread at a time,
// like the transport itself.
#pragma once

#include <poll.h>

#include <algorithm>
#include <vector>

namespace braid::tcp {

class Pollable {
 public:
  virtual ~Pollable() = default;
  // Appends the fds that wait for I/O now, with the events they wait for.
  // Returns true when progress is possible without waiting (e.g. bytes already
  // read ahead into a staging buffer): wait() then returns at once.
  virtual bool addPollFds(std::vector<pollfd>* fds) const = 0;
};

class PollSet {
 public:
  void add(Pollable* p) { members_.push_back(p); }
  void remove(Pollable* p) { members_.erase(std::remove(members_.begin(), members_.end(), p), members_.end()); }
  // True when some member can progress without waiting.
  bool collect(std::vector<pollfd>* fds) const {
    bool readyNow = false;
    for (const Pollable* p : members_) readyNow |= p->addPollFds(fds);
    return readyNow;
  }

 private:
  std::vector<Pollable*> members_;
};

}  // namespace braid::tcp
