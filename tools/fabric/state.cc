#include "state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace braid::fabric {

namespace {

constexpr const char* kStateDir = "/run/braid-fabric";

std::string pathFor(const std::string& name, const char* ext) {
  return std::string(kStateDir) + "/" + name + ext;
}

}  // namespace

std::optional<FabricLock> FabricLock::tryAcquire(const std::string& name, std::string* error) {
  if (mkdir(kStateDir, 0755) != 0 && errno != EEXIST) {
    *error = std::string("cannot create ") + kStateDir + ": " + std::strerror(errno);
    return std::nullopt;
  }
  const std::string path = pathFor(name, ".lock");
  // A holder may delete the file while we wait to lock it (removeOnRelease);
  // then we locked an orphan and try again. Each retry means another process
  // finished with the fabric in between, so a few are plenty.
  for (int attempt = 0; attempt < 5; ++attempt) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      *error = "cannot open " + path + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      close(fd);
      if (err != EWOULDBLOCK) {
        *error = "cannot lock " + path + ": " + std::strerror(err);
        return std::nullopt;
      }
      std::optional<FabricState> st = readState(name);
      *error = "fabric " + name + " is in use by another fabric process";
      if (st && st->pid > 0) *error += " (pid " + std::to_string(st->pid) + ")";
      return std::nullopt;
    }
    struct stat locked {
    }, named{};
    if (fstat(fd, &locked) == 0 && stat(path.c_str(), &named) == 0 && locked.st_ino == named.st_ino &&
        locked.st_dev == named.st_dev)
      return FabricLock(fd, path);
    close(fd);
  }
  *error = "cannot lock " + path + ": it keeps being replaced";
  return std::nullopt;
}

FabricLock::~FabricLock() {
  if (fd_ < 0) return;
  if (remove_) unlink(path_.c_str());  // still locked: nobody can be using it
  close(fd_);                          // closing the only descriptor drops the flock
}

std::string formatState(const FabricState& s) {
  std::ostringstream out;
  out << "name=" << s.spec.name << "\nhosts=" << s.spec.hosts << "\nrate_bits=" << s.spec.rateBits
      << "\nburst_bytes=" << s.spec.burstBytes << "\nowner=" << s.owner << "\npid=" << s.pid << "\n";
  return out.str();
}

std::optional<FabricState> parseState(const std::string& text) {
  FabricState s;
  std::istringstream in(text);
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    try {
      if (key == "name") s.spec.name = value, ++seen;
      if (key == "hosts") s.spec.hosts = std::stoi(value), ++seen;
      if (key == "rate_bits") s.spec.rateBits = std::stoull(value), ++seen;
      if (key == "burst_bytes") s.spec.burstBytes = std::stoull(value), ++seen;
      if (key == "owner") s.owner = value, ++seen;
      if (key == "pid") s.pid = std::stol(value), ++seen;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (seen != 6 || (s.owner != "up" && s.owner != "run")) return std::nullopt;
  return s;
}

std::optional<FabricState> readState(const std::string& name) {
  std::ifstream in(pathFor(name, ".state"));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return parseState(text.str());
}

bool writeState(const FabricState& state, std::string* error) {
  // Written to a temporary and renamed, so a reader never sees half a file.
  const std::string path = pathFor(state.spec.name, ".state");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << formatState(state);
    if (!out.flush()) {
      *error = "cannot write " + tmp;
      return false;
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

void removeState(const std::string& name) { unlink(pathFor(name, ".state").c_str()); }

}  // namespace braid::fabric
