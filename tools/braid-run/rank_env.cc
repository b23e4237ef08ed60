#include "rank_env.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace braid::run {

namespace {

// Variables braid-run sets itself.
constexpr std::array<std::string_view, 10> kOwned = {
    "BRAID_RANK", "BRAID_WORLD_SIZE", "BRAID_ROOT_ADDR",  "BRAID_SECRET", "RANK",
    "WORLD_SIZE", "LOCAL_RANK",       "LOCAL_WORLD_SIZE", "MASTER_ADDR",  "MASTER_PORT"};

// Rank/size of an enclosing launcher (braid-run inside an mpirun or srun job):
// they describe the outer job, not ours.
constexpr std::array<std::string_view, 5> kForeign = {"PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
                                                      "SLURM_LOCALID"};
constexpr std::string_view kForeignPrefix = "OMPI_COMM_WORLD_";

bool dropped(std::string_view entry) {
  const size_t eq = entry.find('=');
  const std::string_view name = entry.substr(0, eq);
  auto in = [&](const auto& list) { return std::find(list.begin(), list.end(), name) != list.end(); };
  return in(kOwned) || in(kForeign) || name.starts_with(kForeignPrefix);
}

}  // namespace

std::string formatHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::vector<std::string> buildRankEnv(const std::vector<std::string>& base, int rank, int nranks,
                                      const Rendezvous& rv) {
  std::vector<std::string> env;
  env.reserve(base.size() + kOwned.size());
  for (const std::string& e : base) {
    if (!dropped(e)) env.push_back(e);
  }
  const std::string r = std::to_string(rank);
  const std::string n = std::to_string(nranks);
  env.push_back("BRAID_RANK=" + r);
  env.push_back("BRAID_WORLD_SIZE=" + n);
  env.push_back("BRAID_ROOT_ADDR=" + formatHostPort(rv.host, rv.port));
  env.push_back("BRAID_SECRET=" + rv.secret);
  env.push_back("RANK=" + r);
  env.push_back("WORLD_SIZE=" + n);
  env.push_back("LOCAL_RANK=" + r);
  env.push_back("LOCAL_WORLD_SIZE=" + n);
  env.push_back("MASTER_ADDR=" + rv.host);
  env.push_back("MASTER_PORT=" + std::to_string(rv.port));
  return env;
}

}  // namespace braid::run
