// Writing topology files, and the file-level load / save around the parser.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "topo/topo_file.h"

namespace braid::topo {
namespace {

using ojson = nlohmann::ordered_json;

std::string hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%0*x", digits, v);
  return buf;
}

const char* pciKindName(PciKind k) {
  return k == PciKind::kHostBridge ? "hostbridge" : k == PciKind::kBridge ? "bridge" : "device";
}

// Entries of one list, one compact object per line: a 128-core machine stays
// readable and diffable.
void emitList(std::ostringstream& out, const char* key, const std::vector<ojson>& items, bool last) {
  out << "      \"" << key << "\": [";
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ",\n        " : "\n        ") << items[i].dump();
  out << (items.empty() ? "]" : "\n      ]") << (last ? "\n" : ",\n");
}

void emitHost(std::ostringstream& out, const HostTopology& h) {
  out << "    {\n";
  out << "      \"hostId\": " << ojson(h.hostId).dump() << ",\n";
  out << "      \"hostname\": " << ojson(h.hostname).dump() << ",\n";
  out << "      \"source\": " << ojson(h.source).dump() << ",\n";
  std::vector<ojson> items;
  for (const Package& p : h.packages) items.push_back({{"id", p.id}, {"cpus", p.cpus.toString()}});
  emitList(out, "packages", items, false);
  items.clear();
  for (const NumaNode& n : h.numaNodes)
    items.push_back({{"id", n.id}, {"package", n.package}, {"cpus", n.cpus.toString()}, {"memoryBytes", n.memoryBytes}});
  emitList(out, "numaNodes", items, false);
  items.clear();
  for (const std::vector<int>& row : h.numaDistances) items.push_back(row);
  emitList(out, "numaDistances", items, false);
  items.clear();
  for (const Core& c : h.cores)
    items.push_back({{"id", c.id}, {"package", c.package}, {"numa", c.numa}, {"pus", c.pus.toString()}});
  emitList(out, "cores", items, false);
  items.clear();
  for (const Cache& c : h.caches)
    items.push_back({{"level", c.level}, {"type", c.type}, {"sizeBytes", c.sizeBytes}, {"cpus", c.cpus.toString()}});
  emitList(out, "caches", items, false);
  items.clear();
  for (const PciEntry& e : h.pci) {
    ojson o = {{"id", e.id}, {"parent", e.parent}, {"kind", pciKindName(e.kind)}};
    if (e.kind != PciKind::kHostBridge)
      o.update({{"class", hex(e.classId, 4)}, {"vendor", hex(e.vendor, 4)}, {"device", hex(e.device, 4)}});
    o["numa"] = e.numa;
    if (e.linkGBps > 0) o["linkGBps"] = e.linkGBps;
    items.push_back(o);
  }
  emitList(out, "pci", items, false);
  items.clear();
  for (const Nic& n : h.nics) {
    ojson o = {{"name", n.name}, {"kind", n.kind == NicKind::kRdma ? "rdma" : "netdev"}, {"pci", n.pci},
               {"numa", n.numa}, {"speedMbps", n.speedMbps}, {"up", n.up}};
    if (!n.netdev.empty()) o["netdev"] = n.netdev;
    items.push_back(o);
  }
  emitList(out, "nics", items, false);
  items.clear();
  for (const Gpu& g : h.gpus) items.push_back({{"name", g.name}, {"pci", g.pci}, {"numa", g.numa}});
  emitList(out, "gpus", items, true);
  out << "    }";
}

}  // namespace

std::string formatTopologyFile(const std::vector<HostTopology>& hosts) {
  std::ostringstream out;
  out << "{\n  \"format\": \"braid-topology\",\n  \"version\": 1,\n  \"hosts\": [\n";
  for (size_t i = 0; i < hosts.size(); ++i) {
    emitHost(out, hosts[i]);
    out << (i + 1 < hosts.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  return out.str();
}

Status loadTopologyFile(const std::string& path, const std::string& hostId, HostTopology* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalidArgument("cannot open topology file '" + path + "': " + std::strerror(errno));
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTopologyFileBytes)
      return invalidArgument("topology file '" + path + "' is larger than 64 MiB");
  }
  std::vector<HostTopology> hosts;
  BRAID_RETURN_IF_ERROR(parseTopologyFile(text, &hosts).prefix("'" + path + "'"));
  const HostTopology* chosen = hosts.size() == 1 ? &hosts[0] : nullptr;
  std::string ids;
  for (const HostTopology& h : hosts) {
    if (h.hostId == hostId) chosen = &h;
    ids += (ids.empty() ? "" : ", ") + h.hostId;
  }
  if (!chosen)
    return invalidArgument("topology file '" + path + "' describes " + std::to_string(hosts.size()) +
                           " hosts (" + ids + ") and none has hostId '" + hostId +
                           "'; set BRAID_HOSTID to one of them");
  *out = *chosen;
  out->source = "file:" + path;
  return Status::ok();
}

Status saveTopologyFile(const std::string& path, const HostTopology& host) {
  std::string text = formatTopologyFile({host});
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return systemError("cannot create topology file '" + tmp + "'", errno);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd), ::unlink(tmp.c_str());
      return systemError("writing topology file '" + tmp + "'", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return systemError("saving topology file '" + path + "'", err);
  }
  return Status::ok();
}

}  // namespace braid::topo
