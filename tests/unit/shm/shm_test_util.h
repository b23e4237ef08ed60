// Helpers for the shm transport tests. The single-thread drivers (Pending,
// driveAll, connectPair) are the tcp tests' own: they only use the transport
// interface.
#pragma once

#include <gtest/gtest.h>

#include <dirent.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/unit/transports/tcp_test_util.h"
#include "transports/shm/config.h"
#include "transports/shm/segment.h"
#include "transports/shm/shm_transport.h"

namespace braid::transport::testing {

inline Options shmOptions(uint8_t secretSeed = 1, int handshakeTimeoutMs = 2000) {
  Options o;
  for (size_t i = 0; i < o.secret.size(); ++i) o.secret[i] = static_cast<uint8_t>(secretSeed * 31 + i);
  o.handshakeTimeoutMs = handshakeTimeoutMs;
  return o;
}

inline shm::ShmConfig shmConfig(bool cma = true, size_t ringBytes = size_t{1} << 20) {
  shm::ShmConfig c;
  c.cmaThreshold = cma ? size_t{256} << 10 : 0;
  c.ringBytes = ringBytes;
  return c;
}

inline std::unique_ptr<Transport> makeShm(const Options& o = shmOptions(), const shm::ShmConfig& c = shmConfig()) {
  std::unique_ptr<Transport> t;
  Status st = shm::ShmTransport::create(o, c, &t);
  EXPECT_TRUE(st.isOk()) << st.message();
  return t;
}

// Names in /dev/shm made by this transport (by any process).
inline std::vector<std::string> shmEntries() {
  std::vector<std::string> out;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(shm::kNamePrefix, 0) == 0) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// The sizes every data-path test moves.
inline std::vector<size_t> testSizes() {
  return {0, 1, 4099, size_t{1} << 20, (size_t{16} << 20) + 7};
}

}  // namespace braid::transport::testing
