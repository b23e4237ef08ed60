// Assertions shared by the bad-input and stranger suites.
#pragma once

#include <braid/braid.h>

#include <string>

namespace braid::itest {

// Expects got == want, and braidGetLastError(comm) to name one of `names`
// ('|'-separated, compared case-insensitively). `what` describes the call.
void expectRejected(const std::string& what, braidResult_t got, braidResult_t want, braidComm_t comm,
                    const std::string& names);

// True when `text` contains `number` as a whole decimal number ("rank 2" has
// 2, "1500 ms" and "12" do not).
bool mentionsNumber(const std::string& text, int number);

}  // namespace braid::itest
