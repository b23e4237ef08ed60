#include "report.h"

namespace braid::cudabench {

std::string sizeName(size_t bytes) {
  const char* units[] = {"", "K", "M", "G"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

Report::Report(const std::string& csvPath) : csvPath_(csvPath) {
  if (!csvPath_.empty()) csv_ = std::fopen(csvPath_.c_str(), "w");
}

Report::~Report() {
  if (csv_) std::fclose(csv_);
}

void Report::header(const std::string& device) {
  std::printf(
      "# %s\n# traffic = bytes read + bytes written; GB/s = 1e9 bytes/s; vs_copy = GB/s over the copy's\n",
      device.c_str());
  std::printf("%-7s %-9s %-5s %6s %10s %12s %9s %8s  %s\n", "kernel", "dtype", "op", "size", "time_us",
              "traffic_B", "GB/s", "vs_copy", "status");
  std::fflush(stdout);
  if (csv_) {
    std::fprintf(csv_, "kernel,dtype,op,size_bytes,time_us,traffic_bytes,gbps,ratio_to_copy,status\n");
    std::fflush(csv_);
  }
}

void Report::add(const Row& r) {
  const bool ok = r.status == "ok";
  const double ratio = ok && r.copyGbps > 0 ? r.gbps() / r.copyGbps : 0;
  if (ok) {
    std::printf("%-7s %-9s %-5s %6s %10.2f %12zu %9.1f %8.3f  ok\n", r.kernel.c_str(), r.dtype.c_str(),
                r.op.c_str(), sizeName(r.size).c_str(), r.us, r.traffic, r.gbps(), ratio);
  } else {
    std::printf("%-7s %-9s %-5s %6s %10s %12zu %9s %8s  %s\n", r.kernel.c_str(), r.dtype.c_str(),
                r.op.c_str(), sizeName(r.size).c_str(), "-", r.traffic, "-", "-", r.status.c_str());
  }
  std::fflush(stdout);
  if (csv_) {
    std::string status = r.status;  // no commas or quotes inside a CSV field
    for (char& c : status)
      if (c == ',' || c == '"') c = ';';
    if (ok)
      std::fprintf(csv_, "%s,%s,%s,%zu,%.3f,%zu,%.2f,%.4f,ok\n", r.kernel.c_str(), r.dtype.c_str(),
                   r.op.c_str(), r.size, r.us, r.traffic, r.gbps(), ratio);
    else
      std::fprintf(csv_, "%s,%s,%s,%zu,,%zu,,,%s\n", r.kernel.c_str(), r.dtype.c_str(), r.op.c_str(), r.size,
                   r.traffic, status.c_str());
    std::fflush(csv_);
  }
}

}  // namespace braid::cudabench
