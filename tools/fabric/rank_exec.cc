#include "rank_exec.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "topology.h"

namespace braid::fabric {

int rankExec(int argc, char** argv) {
  const char* rankText = std::getenv("BRAID_RANK");
  const int ranksPerHost = argc > 3 ? std::atoi(argv[3]) : 0;
  if (argc < 6 || std::strcmp(argv[4], "--") != 0 || !validFabricName(argv[2]) || ranksPerHost < 1 ||
      rankText == nullptr) {
    std::fprintf(stderr, "fabric _rank: internal helper of `fabric run`, not meant to be run by hand\n");
    return 127;
  }
  const int rank = std::atoi(rankText);
  const int host = rank / ranksPerHost;
  const std::string ns = hostNamespace(argv[2], host);
  setenv("BRAID_HOSTID", ns.c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank % ranksPerHost).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(ranksPerHost).c_str(), 1);

  std::vector<char*> args = {const_cast<char*>("ip"), const_cast<char*>("netns"), const_cast<char*>("exec"),
                             const_cast<char*>(ns.c_str())};
  for (int i = 5; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execvp("ip", args.data());
  std::fprintf(stderr, "fabric _rank: cannot run ip: %s\n", std::strerror(errno));
  return 127;
}

}  // namespace braid::fabric
