#include "topo/sysfs_read.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

namespace braid::topo::sysfs {

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

long long readInt(const std::string& path, long long fallback) {
  std::string s = readLine(path);
  if (s.empty()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 0);
  return end == s.c_str() ? fallback : v;
}

std::vector<std::string> listDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (!dir) return names;
  while (dirent* e = readdir(dir)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::string realPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

bool isPciAddress(const std::string& n) {
  // DDDD:BB:DD.F
  if (n.size() != 12 || n[4] != ':' || n[7] != ':' || n[10] != '.') return false;
  for (size_t i = 0; i < n.size(); ++i)
    if (i != 4 && i != 7 && i != 10 && !std::isxdigit(static_cast<unsigned char>(n[i]))) return false;
  return true;
}

}  // namespace braid::topo::sysfs
