#include "algorithms/tuner/link_params.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace braid::algo {
namespace {

// Read and parsed here, so that a bad value is an InvalidArgument naming its
// variable; src/base/env.cc declares them for braid-info --env.
Status readDouble(const char* name, bool allowZero, double* value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return Status::ok();
  char* end = nullptr;
  double parsed = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(parsed) || parsed < 0 || (!allowZero && parsed == 0))
    return invalidArgument(std::string(name) + "='" + text + "' is not a " +
                           (allowZero ? "non-negative" : "positive") + " number");
  *value = parsed;
  return Status::ok();
}

}  // namespace

CostParams LinkSettings::costParams(int ranksPerHost, bool sharedMemory) const {
  CostParams p;
  p.inter.alpha = alphaUs * 1e-6;
  p.inter.beta = betaGBps > 0 ? 1.0 / (betaGBps * 1e9) : 0;
  p.intra = p.inter;
  if (sharedMemory) p.intra = {intraAlphaUs * 1e-6, 1.0 / (intraGBps * 1e9)};
  p.gamma = reduceGBps > 0 ? 1.0 / (reduceGBps * 1e9) : 0;
  p.ranksPerHost = ranksPerHost < 1 ? 1 : ranksPerHost;
  p.sharedNic = true;  // the ranks of a host leave it through one network link
  return p;
}

Status linkSettingsFromEnvironment(LinkSettings* out) {
  LinkSettings s;
  BRAID_RETURN_IF_ERROR(readDouble("BRAID_LINK_ALPHA_US", true, &s.alphaUs));
  BRAID_RETURN_IF_ERROR(readDouble("BRAID_LINK_BETA_GBPS", true, &s.betaGBps));
  BRAID_RETURN_IF_ERROR(readDouble("BRAID_LINK_INTRA_ALPHA_US", true, &s.intraAlphaUs));
  BRAID_RETURN_IF_ERROR(readDouble("BRAID_LINK_INTRA_GBPS", false, &s.intraGBps));
  BRAID_RETURN_IF_ERROR(readDouble("BRAID_REDUCE_GBPS", false, &s.reduceGBps));
  *out = s;
  return Status::ok();
}

}  // namespace braid::algo
