#include "checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace braid::itest {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

void expectRejected(const std::string& what, braidResult_t got, braidResult_t want, braidComm_t comm,
                    const std::string& names) {
  const char* raw = braidGetLastError(comm);
  ASSERT_NE(raw, nullptr) << what << ": braidGetLastError returned NULL";
  const std::string message = raw;
  EXPECT_EQ(got, want) << what << ": got " << braidGetErrorString(got) << " (" << message << "), expected "
                       << braidGetErrorString(want);
  EXPECT_FALSE(message.empty()) << what << ": empty last-error message";
  std::istringstream alternatives(names);
  std::string name;
  bool named = false;
  while (std::getline(alternatives, name, '|'))
    named = named || lower(message).find(lower(name)) != std::string::npos;
  EXPECT_TRUE(named) << what << ": the message \"" << message << "\" does not name " << names;
}

bool mentionsNumber(const std::string& text, int number) {
  const std::string want = std::to_string(number);
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (text.compare(i, j - i, want) == 0 && j - i == want.size()) return true;
    i = j;
  }
  return false;
}

}  // namespace braid::itest
