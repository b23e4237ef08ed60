#include "load.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "parse.h"

namespace braid::trace {
namespace fs = std::filesystem;

namespace {

// The files an argument stands for, or an error. A directory contributes its
// regular *.json files, sorted; the recorder's temp files (".json.tmpPID")
// do not end in .json and are skipped.
std::string expand(const std::string& path, std::vector<std::string>* files) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return path + ": no such file or directory";
  if (!fs::is_directory(path, ec)) {
    files->push_back(path);
    return "";
  }
  std::vector<std::string> found;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && it->is_regular_file(ec)) found.push_back(it->path().string());
  }
  if (ec) return path + ": " + ec.message();
  if (found.empty()) return path + ": no *.json dumps in this directory";
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
  return "";
}

std::string readAll(const std::string& file, std::string* text) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return file + ": cannot open";
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return file + ": read error";
  *text = s.str();
  return "";
}

}  // namespace

std::string checkTogether(const std::vector<Dump>& dumps) {
  for (size_t i = 1; i < dumps.size(); ++i) {
    if (dumps[i].nranks != dumps[0].nranks)
      return dumps[i].file + ": nranks " + std::to_string(dumps[i].nranks) + " but " + dumps[0].file +
             " says " + std::to_string(dumps[0].nranks) + " (dumps of different communicators?)";
  }
  std::map<int, const std::string*> seen;  // rank -> the file that had it first
  for (const Dump& d : dumps) {
    auto [it, fresh] = seen.emplace(d.rank, &d.file);
    if (!fresh)
      return d.file + ": a second dump of rank " + std::to_string(d.rank) + " (the first is " + *it->second +
             "; dumps of different runs? pass the files of one run)";
  }
  return "";
}

Loaded loadDumps(const std::vector<std::string>& paths) {
  Loaded out;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    out.error = expand(p, &files);
    if (!out.error.empty()) return out;
  }
  if (files.empty()) {
    out.error = "no dumps given";
    return out;
  }
  for (const std::string& f : files) {
    std::string text;
    Dump d;
    out.error = readAll(f, &text);
    if (out.error.empty()) out.error = parseDump(text, f, &d);
    if (!out.error.empty()) return out;
    out.dumps.push_back(std::move(d));
  }
  std::sort(out.dumps.begin(), out.dumps.end(), [](const Dump& a, const Dump& b) { return a.rank < b.rank; });
  out.error = checkTogether(out.dumps);
  return out;
}

}  // namespace braid::trace
