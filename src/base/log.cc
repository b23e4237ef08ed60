#include "base/log.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "base/hot_thread_local.h"

namespace braid::log {
namespace {

BRAID_HOT_THREAD_LOCAL int tlsRank = -1;

struct Sink {
  Level level = Level::kWarn;
  int fd = 2;
  std::string host;
};

std::string expandPath(const std::string& pattern, const std::string& host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'h') { out += host; ++i; continue; }
      if (c == 'p') { out += std::to_string(getpid()); ++i; continue; }
    }
    out += pattern[i];
  }
  return out;
}

Sink& sink() {
  static Sink s = [] {
    Sink made;
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    made.host = host;
    if (const char* lv = std::getenv("BRAID_DEBUG")) {
      if (!strcasecmp(lv, "NONE")) made.level = Level::kNone;
      else if (!strcasecmp(lv, "INFO")) made.level = Level::kInfo;
      else if (!strcasecmp(lv, "TRACE")) made.level = Level::kTrace;
      else made.level = Level::kWarn;
    }
    if (const char* file = std::getenv("BRAID_DEBUG_FILE"); file && *file) {
      std::string path = expandPath(file, made.host);
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) made.fd = fd;
    }
    return made;
  }();
  return s;
}

const char* levelName(Level l) {
  switch (l) {
    case Level::kWarn: return "WARN";
    case Level::kInfo: return "INFO";
    case Level::kTrace: return "TRACE";
    default: return "";
  }
}

}  // namespace

Level level() { return sink().level; }
void setThreadRank(int rank) { tlsRank = rank; }

void write(Level l, const char* fmt, ...) {
  Sink& s = sink();
  char line[2048];
  int n = 0;
  long tid = syscall(SYS_gettid);
  if (tlsRank >= 0)
    n = snprintf(line, sizeof(line), "%s:%d:%ld [%d] braid %s ", s.host.c_str(), getpid(), tid,
                 tlsRank, levelName(l));
  else
    n = snprintf(line, sizeof(line), "%s:%d:%ld braid %s ", s.host.c_str(), getpid(), tid,
                 levelName(l));
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
  va_end(ap);
  size_t len = n + (m < 0 ? 0 : std::min<size_t>(m, sizeof(line) - n - 2));
  line[len++] = '\n';
  ssize_t ignored = ::write(s.fd, line, len);
  (void)ignored;
}

}  // namespace braid::log
