// Small readers for /proc and /sys files used by the sysfs detector. All
// return "nothing" (empty / fallback) when a file is absent or unreadable:
// sysfs differs between kernels and containers, and a missing entry means
// "unknown", not an error.
#pragma once

#include <string>
#include <vector>

namespace braid::topo::sysfs {

// The first line of a file without its newline; "" when unreadable.
std::string readLine(const std::string& path);
// A decimal (or 0x hex) integer from the first line; `fallback` when unreadable.
long long readInt(const std::string& path, long long fallback);
// Names in a directory, sorted, without "." and ".."; empty when unreadable.
std::vector<std::string> listDir(const std::string& path);
// The canonical path a symlink leads to; "" on failure.
std::string realPath(const std::string& path);
// Is this "DDDD:BB:DD.F"?
bool isPciAddress(const std::string& name);

}  // namespace braid::topo::sysfs
