#include "transport_matrix.h"

#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness.h"

namespace braid::itest {

void runMatrixOver(const std::string& transport, const TransportShape& shape, const MatrixOptions& m,
                   const std::function<void(int rank)>& prepare) {
  RunOptions o;
  o.nranks = shape.ranks;
  o.init = false;
  o.sharedBytes = 64;
  o.limitSeconds = 150;
  runRanks(o, [&](RankContext& ctx) {
    if (prepare) prepare(ctx.rank);
    if (shape.hosts == 0) {
      setenv("BRAID_TRANSPORT", transport.c_str(), 1);
    } else {
      unsetenv("BRAID_TRANSPORT");
      setenv("BRAID_NET", transport.c_str(), 1);
      std::string host = transport + "-host-";
      setenv("BRAID_HOSTID", host.append(std::to_string(ctx.rank % shape.hosts)).c_str(), 1);
    }
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 60000;
    ASSERT_EQ(braidCommInitRankConfig(&ctx.comm, ctx.nranks, ctx.id, ctx.rank, &cfg), braidSuccess)
        << braidGetLastError(nullptr);
    runInline(buildMatrix(shape.ranks, m), ctx.comm, ctx.rank, shape.ranks, ctx.shared);
  });
}

std::string shapeName(const std::string& transport, const TransportShape& shape) {
  // Built with append: GCC 12's -Wrestrict trips on "N" + ...
  std::string name = std::to_string(shape.ranks);
  name.insert(0, 1, 'N');
  if (shape.hosts == 0) return name.append("_all_").append(transport);
  return name.append("_").append(std::to_string(shape.hosts)).append("hosts");
}

}  // namespace braid::itest
