// braid-info --tuner: the cost model's predicted time of every algorithm of a
// collective over a grid of rank counts and sizes, with the tuner's pick, for
// the link parameters a communicator would use here (BRAID_LINK_ALPHA_US,
// BRAID_LINK_BETA_GBPS, BRAID_REDUCE_GBPS). It is the table a user reads to
// see why the tuner picks what it picks, at this job's size or at 16k ranks,
// without running anything: predictions only, no network.
#pragma once

#include <string>
#include <vector>

namespace braid::info {

struct TunerReportRequest {
  std::string collective = "allreduce";
  std::string ranks = "2,4,8,64,1024,16384";  // comma-separated rank counts
  std::string sizes = "8,1k,64k,1m,16m,1g";    // comma-separated byte sizes (k/m/g: powers of 1024)
  int ranksPerHost = 1;
};

// The table as text, or false with *error saying which argument is wrong.
bool tunerReport(const TunerReportRequest& request, std::string* out, std::string* error);

}  // namespace braid::info
