// The connects a transport has in progress. transport.h's connect() does not
// block: its caller calls it again with the same (dev, handle, connectorId)
// until a SendComm comes out or it fails, and the transport carries each
// attempt over from call to call under that key.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "transports/transport.h"

namespace braid::transport {

template <typename Attempt>
class ConnectAttempts {
 public:
  // The attempt under this key, or null when none is in progress.
  Attempt* find(int dev, const Handle& handle, uint64_t connectorId) const {
    for (const Entry& e : entries_)
      if (e.dev == dev && e.connectorId == connectorId && e.handle.bytes == handle.bytes)
        return e.attempt.get();
    return nullptr;
  }
  // Keeps `attempt` under the key until remove(); returns it.
  Attempt* add(int dev, const Handle& handle, uint64_t connectorId, std::unique_ptr<Attempt> attempt) {
    entries_.push_back(Entry{dev, handle, connectorId, std::move(attempt)});
    return entries_.back().attempt.get();
  }
  // Ends an attempt that finished or failed (destroying it).
  void remove(const Attempt* attempt) {
    std::erase_if(entries_, [&](const Entry& e) { return e.attempt.get() == attempt; });
  }
  template <typename Fn>
  void forEach(Fn fn) const {
    for (const Entry& e : entries_) fn(*e.attempt);
  }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    int dev;
    Handle handle;
    uint64_t connectorId;
    std::unique_ptr<Attempt> attempt;
  };
  std::vector<Entry> entries_;
};

}  // namespace braid::transport
