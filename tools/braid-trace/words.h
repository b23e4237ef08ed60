// Small pieces of English shared by the text and JSON renderers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid::trace {

// "rank 3", "ranks 0, 1", "ranks 0-5, 7" (runs of three or more as a range);
// `ranks` sorted ascending.
std::string rankList(const std::vector<int>& ranks);

// "800 ns", "12.5 us", "3.1 ms", "12.0 s".
std::string duration(double ns);

// "1st", "2nd", "3rd", "4th", "11th", "21st".
std::string ordinal(uint64_t n);

// "a", "a and b", "a, b and c".
std::string joinAnd(const std::vector<std::string>& items);

// The sentence with its first letter in upper case.
std::string sentence(std::string s);

// `text` with control characters (a dump is untrusted input: a host name or
// error could hold terminal escapes) replaced by '?', newlines kept.
std::string printable(std::string text);

}  // namespace braid::trace
