// Checksum repairs, so that fuzzers get past integrity checks into the code
// behind them. A mutated unique id or frame header almost never carries a
// matching SipHash; a target that repairs it (when a control bit says so)
// explores the parser behind the check as well as the check itself.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/bootstrap/unique_id.h"
#include "transports/net/auth.h"
#include "transports/tcp/frame.h"

namespace braid::fuzz {

// Copy of the fixed key in core/bootstrap/unique_id.cc (private there). The seed
// test checks that UniqueId::pack output is left unchanged by this repair, so a
// change of the key or the layout fails a test instead of silently weakening
// the fuzzer.
inline void repairUniqueIdCheck(uint8_t id[bootstrap::UniqueId::kBytes]) {
  static const transport::Secret kKey = {'b', 'r', 'a', 'i', 'd', '-', 'u', 'n',
                                         'i', 'q', 'u', 'e', '-', 'i', 'd', '1'};
  constexpr size_t kCheckAt = 56;
  std::memset(id + kCheckAt, 0, 8);
  uint64_t check = net::sipHash24(kKey, id, bootstrap::UniqueId::kBytes);
  for (int i = 0; i < 8; ++i) id[kCheckAt + i] = static_cast<uint8_t>(check >> (8 * i));
}

inline void repairFrameCheck(uint8_t header[tcp::kFrameHeaderBytes]) {
  tcp::FrameHeader h;
  std::memcpy(&h, header, sizeof(h));
  h.check = tcp::frameCheck(h);
  std::memcpy(header, &h, sizeof(h));
}

}  // namespace braid::fuzz
