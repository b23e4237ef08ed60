// The core correctness matrix over one named transport, for the transports
// that are not the default (ucx, netplugin, ibverbs): every pair forced onto it
// (BRAID_TRANSPORT), or, as a cluster would use it, between pretend hosts
// (BRAID_NET) while ranks of one host keep shared memory.
#pragma once

#include <functional>
#include <string>

#include "matrix.h"

namespace braid::itest {

struct TransportShape {
  int ranks;
  int hosts;  // 0: every pair on the transport; else rank r on pretend host r % hosts
};

// `prepare(rank)` runs first in every rank (e.g. to set the transport's own variables).
void runMatrixOver(const std::string& transport, const TransportShape& shape, const MatrixOptions& m,
                   const std::function<void(int rank)>& prepare = {});
// "N3_all_<transport>" or "N4_2hosts".
std::string shapeName(const std::string& transport, const TransportShape& shape);

}  // namespace braid::itest
