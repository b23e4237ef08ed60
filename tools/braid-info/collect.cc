#include "collect.h"

#include <braid/braid.h>

#include <algorithm>
#include <set>

#include "algorithms/registry.h"
#include "base/env.h"
#include "base/shareable_memory.h"
#include "kernels/device_loader.h"
#include "topo/bind.h"
#include "topo/detect.h"
#include "topo/topo_file.h"
#include "transports/registry.h"

namespace braid::info {
namespace {

// Transports braid has or plans; those not registered in this build are
// reported as such rather than silently missing.
const char* const kKnownTransports[] = {"tcp", "shm", "ibverbs", "ucx", "netplugin"};

Json version() {
  int code = 0;
  braidResult_t r = braidGetVersion(&code);
  Json v = {{"code", code}, {"string", std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
                                           std::to_string(code % 100)}};
  if (r != braidSuccess) v["error"] = braidGetErrorString(r);
  return v;
}

Json build(const std::vector<std::string>& transports) {
  auto has = [&](const char* t) { return std::find(transports.begin(), transports.end(), t) != transports.end(); };
  Json b = {{"buildType", BRAID_INFO_BUILD_TYPE}, {"sanitizer", BRAID_INFO_SANITIZE}};
  Json parts = Json::object();
  parts["hwloc"] = topo::builtWithHwloc() ? "yes" : "no (topology from /proc and /sys)";
  for (const char* t : kKnownTransports) parts[std::string("transport ") + t] = has(t) ? "yes" : "not built";
  // The CUDA module is opened at run time, so say what this process found.
  parts["cuda"] = kernels::deviceModule() != nullptr ? std::string("yes (libbraid-cuda.so, a device is present)")
                                                     : "no: " + kernels::deviceUnavailableReason();
  // braidMemAlloc's memory is read by peers through mappings only where the
  // kernel lets them take its descriptors.
  const Status mapping = probeShareableMapping();
  parts["braidMemAlloc"] = mapping.isOk()
                               ? std::string("yes (peers on this host read it through mappings)")
                               : "no: " + mapping.message() + " (peers read it with process_vm_readv)";
#ifdef BRAID_INFO_NCCL_NET_PLUGIN
  parts["nccl net plugin"] =
      "yes (" BRAID_INFO_NCCL_NET_PLUGIN ", for NCCL_NET_PLUGIN=braid; ncclNetPlugin_v8 to _v11)";
#else
  parts["nccl net plugin"] = "not built";
#endif
  b["parts"] = parts;
  return b;
}

Json transportEntry(const std::string& name, bool registered) {
  Json t = {{"name", name}};
  if (!registered) {
    t["status"] = "not built in this version";
    return t;
  }
  transport::Options options;
  options.ifname = env::getString("BRAID_SOCKET_IFNAME");
  std::unique_ptr<transport::Transport> tr;
  Status st = transport::createTransport(name, options, &tr);
  if (!st.isOk()) {
    t["status"] = std::string(codeName(st.code())) + ": " + st.message();
    return t;
  }
  t["status"] = "ok";
  Json devices = Json::array();
  for (int d = 0; d < tr->deviceCount(); ++d) {
    transport::DeviceProperties p;
    if (!tr->deviceProperties(d, &p).isOk()) continue;
    devices.push_back({{"name", p.name}, {"address", p.address}, {"speedMbps", p.speedMbps}});
  }
  t["devices"] = devices;
  return t;
}

Json transports(const std::vector<std::string>& registered) {
  std::vector<std::string> names(std::begin(kKnownTransports), std::end(kKnownTransports));
  for (const std::string& r : registered)
    if (std::find(names.begin(), names.end(), r) == names.end()) names.push_back(r);
  Json list = Json::array();
  for (const std::string& n : names)
    list.push_back(transportEntry(n, std::find(registered.begin(), registered.end(), n) != registered.end()));
  return list;
}

Json algorithms() {
  Json byCollective = Json::object();
  for (const algo::Algorithm& a : algo::registeredAlgorithms()) {
    std::string c = algo::collectiveName(a.collective);
    if (!byCollective.contains(c)) byCollective[c] = Json::array();
    byCollective[c].push_back(a.name);
  }
  return byCollective;
}

// What this process may run on: a rank started the same way gets this set
// (unless its launcher pins it) and tells the other ranks at init, which then
// judge from every rank's set whether ranks compete for CPUs.
Json process() {
  topo::CpuList cpus;
  if (!topo::currentAffinity(&cpus).isOk()) return {{"cpus", nullptr}};
  return {{"cpus", cpus.toString()}};
}

}  // namespace

Json envTable() {
  Json list = Json::array();
  for (const env::Variable& v : env::all()) {
    auto value = env::raw(v.name);
    list.push_back({{"name", v.name},
                    {"value", value ? Json(*value) : Json(nullptr)},
                    {"default", v.defaultValue},
                    {"help", v.help}});
  }
  return list;
}

Collected collect() {
  Collected c;
  std::vector<std::string> registered = transport::registeredTransports();
  c.doc["version"] = version();
  c.doc["build"] = build(registered);
  Status st = topo::localTopology(&c.topology);
  if (st.isOk()) {
    c.haveTopology = true;
    // The host object exactly as the topology file format has it (FORMAT.md).
    c.doc["topology"] = Json::parse(topo::formatTopologyFile({c.topology}))["hosts"][0];
  } else {
    c.doc["topology"] = {{"error", std::string(codeName(st.code())) + ": " + st.message()}};
  }
  c.doc["process"] = process();
  c.doc["transports"] = transports(registered);
  c.doc["algorithms"] = algorithms();
  c.doc["env"] = envTable();
  return c;
}

}  // namespace braid::info
