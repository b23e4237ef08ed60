#include "tuner_report.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "algorithms/registry.h"
#include "algorithms/tuner/link_params.h"
#include "algorithms/tuner/tuner.h"

namespace braid::info {
namespace {

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

bool parseRanks(const std::string& text, std::vector<int>* out, std::string* error) {
  for (const std::string& part : splitCommas(text)) {
    size_t n = 0;
    // parseSize would accept "1k"; rank counts are plain numbers.
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || !algo::parseSize(part, &n) ||
        n < 1 || n > (1u << 20)) {
      *error = "--ranks: '" + part + "' is not a rank count between 1 and 1048576";
      return false;
    }
    out->push_back(static_cast<int>(n));
  }
  if (out->empty()) *error = "--ranks: no rank count given";
  return !out->empty();
}

bool parseSizes(const std::string& text, std::vector<size_t>* out, std::string* error) {
  for (const std::string& part : splitCommas(text)) {
    size_t bytes = 0;
    if (!algo::parseSize(part, &bytes) || bytes == SIZE_MAX) {
      *error = "--sizes: '" + part + "' is not a size (digits with an optional k, m or g)";
      return false;
    }
    out->push_back(bytes);
  }
  if (out->empty()) *error = "--sizes: no size given";
  return !out->empty();
}

}  // namespace

bool tunerReport(const TunerReportRequest& request, std::string* out, std::string* error) {
  algo::Collective collective;
  if (!algo::parseCollective(request.collective.c_str(), &collective)) {
    *error = "--collective: unknown collective '" + request.collective + "'";
    return false;
  }
  std::vector<int> ranks;
  std::vector<size_t> sizes;
  if (!parseRanks(request.ranks, &ranks, error) || !parseSizes(request.sizes, &sizes, error)) return false;
  if (request.ranksPerHost < 1) {
    *error = "--ranks-per-host: must be at least 1";
    return false;
  }
  algo::LinkSettings link;
  Status st = algo::linkSettingsFromEnvironment(&link);
  if (!st.isOk()) {
    *error = st.message();
    return false;
  }
  char head[512];
  std::snprintf(head, sizeof head,
                "# link model: network alpha %.3g us, beta %.3g GB/s; inside a host (shared memory) alpha "
                "%.3g us, beta %.3g GB/s; reductions %.3g GB/s; %d rank(s) per host\n"
                "# (BRAID_LINK_ALPHA_US, BRAID_LINK_BETA_GBPS, BRAID_LINK_INTRA_ALPHA_US, "
                "BRAID_LINK_INTRA_GBPS, BRAID_REDUCE_GBPS)\n",
                link.alphaUs, link.betaGBps, link.intraAlphaUs, link.intraGBps, link.reduceGBps,
                request.ranksPerHost);
  *out = head;
  if (!link.modelEnabled()) {
    *out += "# the cost model is off (BRAID_LINK_BETA_GBPS=0): the fixed fallback table picks\n";
    return true;
  }
  const char* forced = std::getenv("BRAID_TRANSPORT");  // as the communicator reads it
  const bool sharedMemory = algo::sharedMemoryInsideHosts(forced == nullptr ? "" : forced);
  if (!sharedMemory) *out += "# BRAID_TRANSPORT forces the network inside hosts too: one link class\n";
  *out +=
      algo::predictionTable(collective, ranks, sizes, link.costParams(request.ranksPerHost, sharedMemory));
  return true;
}

}  // namespace braid::info
