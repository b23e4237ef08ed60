// The environment each rank is started with: the caller's environment, minus
// rank variables of other launchers that could confuse braidCommInitFromEnv,
// plus braid's and torchrun's rendezvous variables.
#pragma once

#include <string>
#include <vector>

namespace braid::run {

struct Rendezvous {
  std::string host;  // as given to --addr (IPv6 without brackets)
  int port = 0;
  std::string secret;  // 32 lowercase hex digits
};

// "host:port", with brackets around an IPv6 host ("[::1]:29500").
std::string formatHostPort(const std::string& host, int port);

// base holds "NAME=value" entries (e.g. from environ). Entries whose name is set
// here, or that belong to another launcher's rank bookkeeping (OMPI_COMM_WORLD_*,
// PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID), are dropped.
std::vector<std::string> buildRankEnv(const std::vector<std::string>& base, int rank, int nranks,
                                      const Rendezvous& rv);

}  // namespace braid::run
