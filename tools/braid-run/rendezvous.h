// Choosing the rendezvous endpoint and secret for one braid-run job.
#pragma once

#include <cstdint>
#include <string>

namespace braid::run {

// A TCP port on host that is free right now: bound with port 0 and released.
// Another process could take it before rank 0 binds it; that is rare and
// makes rank 0 fail to init, which braid-run reports like any rank failure.
// Returns 0 and fills *error on failure.
int pickFreePort(const std::string& host, std::string* error);

// 16 bytes from getrandom(2) as 32 lowercase hex digits; "" and *error on failure.
std::string generateSecret(std::string* error);

// Lowercase hex of the bytes (pure; the formatting generateSecret uses).
std::string toHex(const uint8_t* bytes, size_t n);

}  // namespace braid::run
