#include "core/launcher_env.h"

#include <cstdlib>

namespace braid::core {
namespace {

bool parseInt(const std::string& s, int* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || v < 0 || v > (1 << 24)) return false;
  *out = static_cast<int>(v);
  return true;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Status readLauncherEnv(const Lookup& lookup, LauncherEnv* out) {
  static const struct {
    const char* rank;
    const char* size;
    const char* name;
  } conventions[] = {
      {"BRAID_RANK", "BRAID_WORLD_SIZE", "braid-run"},
      {"RANK", "WORLD_SIZE", "torchrun"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"},
      {"PMI_RANK", "PMI_SIZE", "PMI"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM"},
  };
  LauncherEnv env;
  for (const auto& c : conventions) {
    auto rank = lookup(c.rank), size = lookup(c.size);
    if (!rank || !size) continue;
    if (!parseInt(*rank, &env.rank) || !parseInt(*size, &env.nranks) || env.nranks == 0 ||
        env.rank >= env.nranks)
      return invalidArgument(std::string("braidCommInitFromEnv: ") + c.rank + "='" + *rank + "' / " +
                             c.size + "='" + *size + "' are not a rank below a positive size");
    env.source = c.name;
    break;
  }
  if (env.source.empty())
    return invalidArgument(
        "braidCommInitFromEnv: no rank and size in the environment (looked for BRAID_RANK/"
        "BRAID_WORLD_SIZE, RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE, "
        "SLURM_PROCID/SLURM_NTASKS)");
  if (auto addr = lookup("BRAID_ROOT_ADDR"); addr && !addr->empty()) {
    env.rootAddress = *addr;
  } else {
    auto host = lookup("MASTER_ADDR"), port = lookup("MASTER_PORT");
    if (!host || !port || host->empty() || port->empty())
      return invalidArgument("braidCommInitFromEnv: set BRAID_ROOT_ADDR=host:port or MASTER_ADDR and "
                             "MASTER_PORT (the address rank 0 listens on)");
    bool v6 = host->find(':') != std::string::npos && host->front() != '[';
    env.rootAddress = (v6 ? "[" + *host + "]" : *host) + ":" + *port;
  }
  if (auto secret = lookup("BRAID_SECRET"); secret && !secret->empty()) {
    if (secret->size() != 2 * transport::kSecretBytes)
      return invalidArgument("BRAID_SECRET must be 32 hex digits");
    for (size_t i = 0; i < transport::kSecretBytes; ++i) {
      int hi = hexDigit((*secret)[2 * i]), lo = hexDigit((*secret)[2 * i + 1]);
      if (hi < 0 || lo < 0) return invalidArgument("BRAID_SECRET must be 32 hex digits");
      env.secret[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    env.hasSecret = true;
  }
  *out = env;
  return Status::ok();
}

Status readLauncherEnv(LauncherEnv* out) {
  return readLauncherEnv(
      [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        return v ? std::optional<std::string>(v) : std::nullopt;
      },
      out);
}

}  // namespace braid::core
