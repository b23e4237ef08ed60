// Logging controlled by BRAID_DEBUG (NONE|WARN|INFO|TRACE) and BRAID_DEBUG_FILE
// (%h host, %p pid). Every line reads "host:pid:tid [rank] braid LEVEL message".
// Thread-safe; a line is written with one write() so ranks' lines do not mix.
#pragma once

namespace braid::log {

enum class Level : int { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// The level in force (read from the environment once).
Level level();
inline bool enabled(Level l) { return static_cast<int>(l) <= static_cast<int>(level()); }
// The rank shown in this thread's lines (-1: none). Set by the code running an
// operation for a communicator.
void setThreadRank(int rank);
void write(Level l, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace braid::log

#define BRAID_LOG_AT(lvl, ...)                                      \
  do {                                                              \
    if (::braid::log::enabled(lvl)) ::braid::log::write(lvl, __VA_ARGS__); \
  } while (0)
#define BRAID_WARN(...) BRAID_LOG_AT(::braid::log::Level::kWarn, __VA_ARGS__)
#define BRAID_INFO(...) BRAID_LOG_AT(::braid::log::Level::kInfo, __VA_ARGS__)
#define BRAID_TRACE(...) BRAID_LOG_AT(::braid::log::Level::kTrace, __VA_ARGS__)
