// WaitSet: the live endpoints of one ShmTransport, so that wait() knows what to
// sleep on. Data comms are watched through the transport's doorbell; endpoints
// still setting up (listeners, connects waiting for a reply) through their
// sockets. Shared (shared_ptr) between the transport and its endpoints, so
// either may be destroyed first. Used by one thread at a time, like the transport.
#pragma once

#include <poll.h>

#include <algorithm>
#include <vector>

namespace braid::shm {

class DataEndpoint {
 public:
  virtual ~DataEndpoint() = default;
  virtual bool pending() const = 0;      // has requests in flight
  virtual bool mayProgress() const = 0;  // a test() now would move something or fail
  // This process starts local work (Transport::noteLocalWork): a receiving
  // end with an offer up wakes its sender, which may push into it now.
  virtual void startingLocalWork() {}
};

class SetupEndpoint {
 public:
  virtual ~SetupEndpoint() = default;
  // Appends the fds to poll; true when progress is possible without waiting.
  virtual bool addPollFds(std::vector<pollfd>* fds) const = 0;
};

class WaitSet {
 public:
  void add(DataEndpoint* e) { data_.push_back(e); }
  void remove(DataEndpoint* e) { data_.erase(std::remove(data_.begin(), data_.end(), e), data_.end()); }
  void add(SetupEndpoint* e) { setup_.push_back(e); }
  void remove(SetupEndpoint* e) { setup_.erase(std::remove(setup_.begin(), setup_.end(), e), setup_.end()); }

  bool anyPending() const {
    return std::any_of(data_.begin(), data_.end(), [](const DataEndpoint* e) { return e->pending(); });
  }
  bool anyReady() const {
    return std::any_of(data_.begin(), data_.end(), [](const DataEndpoint* e) { return e->pending() && e->mayProgress(); });
  }
  void startingLocalWork() const {
    for (DataEndpoint* e : data_) e->startingLocalWork();
  }
  bool collectSetup(std::vector<pollfd>* fds) const {
    bool ready = false;
    for (const SetupEndpoint* e : setup_) ready |= e->addPollFds(fds);
    return ready;
  }

 private:
  std::vector<DataEndpoint*> data_;
  std::vector<SetupEndpoint*> setup_;
};

}  // namespace braid::shm
