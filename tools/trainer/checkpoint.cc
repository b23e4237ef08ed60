#include "checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace braid::trainer {
namespace {

constexpr uint32_t kMagic = 0x4b435242;  // "BRCK"
constexpr uint32_t kVersion = 1;

struct Header {
  uint32_t magic, version, what, pad;
  int64_t step;
  uint64_t count;
};

}  // namespace

std::string stepDir(const std::string& dir, int64_t step) { return dir + "/step-" + std::to_string(step); }

std::string writeBlob(const std::string& path, uint32_t what, int64_t step, const std::vector<float>& data) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return "cannot create the directory of " + path + ": " + ec.message();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  Header h{kMagic, kVersion, what, 0, step, data.size()};
  out.write(reinterpret_cast<const char*>(&h), sizeof(h));
  out.write(reinterpret_cast<const char*>(data.data()),
            static_cast<std::streamsize>(data.size() * sizeof(float)));
  out.close();
  return out ? "" : "cannot write " + path;
}

std::string readBlob(const std::string& path, uint32_t what, int64_t step, std::vector<float>* data) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open " + path;
  Header h{};
  in.read(reinterpret_cast<char*>(&h), sizeof(h));
  if (!in || h.magic != kMagic || h.version != kVersion)
    return path + " is not a braid-trainer checkpoint of this version";
  if (h.what != what || h.step != step) return path + " holds another part or step than its name says";
  if (h.count != data->size())
    return path + " holds " + std::to_string(h.count) + " values where this model has " +
           std::to_string(data->size()) + " (resume with the model's shape flags of the run that wrote it)";
  in.read(reinterpret_cast<char*>(data->data()), static_cast<std::streamsize>(data->size() * sizeof(float)));
  return in ? "" : path + " is cut short";
}

std::string commitStep(const std::string& dir, int64_t step) {
  std::string tmp = dir + "/latest.tmp", latest = dir + "/latest";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << step << "\n";
    if (!out) return "cannot write " + tmp;
  }
  if (std::rename(tmp.c_str(), latest.c_str()) != 0) return "cannot rename " + tmp + " to " + latest;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && name != "step-" + std::to_string(step))
      std::filesystem::remove_all(entry.path(), ec);
  }
  return "";
}

int64_t latestStep(const std::string& dir) {
  std::ifstream in(dir + "/latest");
  int64_t step = -1;
  if (!(in >> step) || step < 0) return -1;
  return step;
}

}  // namespace braid::trainer
