// Names braid's own threads, so that `top -H`, gdb, perf and py-spy tell a
// stream worker from a watchdog from the user's threads (MegaScale-style
// diagnosis starts with knowing which thread is stuck). Linux keeps 15
// characters; a longer name is cut, not refused.
#pragma once

#include <pthread.h>

#include <cstring>

namespace braid {

inline void nameThisThread(const char* name) {
  char shortName[16];
  std::strncpy(shortName, name, sizeof(shortName) - 1);
  shortName[sizeof(shortName) - 1] = '\0';
  pthread_setname_np(pthread_self(), shortName);  // best effort: a name is a diagnostic, not a duty
}

}  // namespace braid
