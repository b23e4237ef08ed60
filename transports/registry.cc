#include "transports/registry.h"

#include <map>
#include <mutex>

namespace braid::transport {
namespace {
struct Table {
  std::mutex mu;
  std::map<std::string, Factory> factories;
};
Table& table() {
  static Table t;
  return t;
}
}  // namespace

void registerTransport(const char* name, Factory factory) {
  std::lock_guard<std::mutex> lock(table().mu);
  table().factories[name] = std::move(factory);
}

std::vector<std::string> registeredTransports() {
  std::lock_guard<std::mutex> lock(table().mu);
  std::vector<std::string> names;
  for (auto& [name, f] : table().factories) names.push_back(name);
  return names;
}

Status createTransport(const std::string& name, const Options& options,
                       std::unique_ptr<Transport>* out) {
  Factory factory;
  {
    std::lock_guard<std::mutex> lock(table().mu);
    auto it = table().factories.find(name);
    if (it == table().factories.end()) {
      std::string known;
      for (auto& [n, f] : table().factories) known += (known.empty() ? "" : ", ") + n;
      return invalidArgument("unknown transport '" + name + "' (built in: " + known + ")");
    }
    factory = it->second;
  }
  return factory(options, out);
}

}  // namespace braid::transport
