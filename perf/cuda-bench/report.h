// The rows: a table on stdout as they come, and optionally a CSV file.
//
// Columns: kernel; dtype (the element type; for codecs the host type); op
// (the reduction op; for codecs the wire format); size (bytes of the
// host-typed buffer); time_us (median per launch); traffic_bytes (bytes read
// plus bytes written, see cases.h); GB/s of that traffic (10^9 bytes); the
// ratio to the copy's GB/s at the same size; status (ok, rejected: the module
// refused the combination, or failed: why).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace braid::cudabench {

struct Row {
  std::string kernel, dtype, op;
  size_t size = 0, traffic = 0;
  double us = 0;
  double copyGbps = 0;  // the copy's at this size; 0 when it failed
  std::string status = "ok";

  double gbps() const { return us > 0 ? traffic / us / 1e3 : 0; }
};

class Report {
 public:
  // csvPath may be empty. ok() is false when the file cannot be opened.
  explicit Report(const std::string& csvPath);
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  bool ok() const { return csvPath_.empty() || csv_ != nullptr; }

  void header(const std::string& device);
  void add(const Row& row);

 private:
  std::string csvPath_;
  FILE* csv_ = nullptr;
};

std::string sizeName(size_t bytes);  // "64M", "1G", "4K", "100"

}  // namespace braid::cudabench
