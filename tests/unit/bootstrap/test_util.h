// Helpers for the bootstrap tests: ranks run as threads of this process, each
// with its own sockets, listener and inbox thread, which is what a rank in its
// own process has too.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/root.h"
#include "core/bootstrap/unique_id.h"

namespace braid::bootstrap::testing {

inline int64_t msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// Runs body(i) for i in [0, n) on n threads and joins them.
inline void onThreads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(body, i);
  for (auto& t : threads) t.join();
}

struct Joined {
  Status status;
  std::unique_ptr<Bootstrap> boot;
  int64_t elapsedMs = 0;
};

// Every (rank, nranks) pair joins on its own thread; results in the same order.
inline std::vector<Joined> joinAll(const UniqueId& id, const std::vector<std::pair<int, int>>& who,
                                   int timeoutMs) {
  std::vector<Joined> out(who.size());
  onThreads(static_cast<int>(who.size()), [&](int i) {
    auto start = std::chrono::steady_clock::now();
    out[i].status = Bootstrap::create(id, who[i].first, who[i].second, timeoutMs, &out[i].boot);
    out[i].elapsedMs = msSince(start);
  });
  return out;
}

inline std::vector<std::pair<int, int>> ranksOf(int nranks) {
  std::vector<std::pair<int, int>> who;
  for (int r = 0; r < nranks; ++r) who.emplace_back(r, nranks);
  return who;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace braid::bootstrap::testing
