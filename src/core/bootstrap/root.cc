#include "core/bootstrap/root.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "core/bootstrap/root_server.h"
#include "transports/net/auth.h"

namespace braid::bootstrap {
namespace {

// Owns every root of the process. A root's thread ends by itself (bounded by
// its deadlines) and is detached: a process may leave (exit, or _exit as a
// forked launcher's child does) while a root is finished but not yet reaped,
// and a finished root must not count as a thread left unjoined. Instead each
// thread says when it is done with its entry; finished entries are dropped
// when the next root starts, and stopAllRoots() or this registry's destructor
// at process exit stop the rest and wait for them to say so.
//
// Fork: a child inherits the entries but not the threads, which will never say
// they are done there, so entries made by another pid are set aside and never
// destroyed.
class Registry {
 public:
  static Registry& get() {
    // Make the log sink exist first, so it is destroyed after us: a root thread
    // may log until it is done.
    (void)log::level();
    static Registry registry;
    return registry;
  }
  ~Registry() { stopAll(); }

  void start(std::unique_ptr<RootServer> server) {
    std::lock_guard<std::mutex> lock(mu_);
    reapFinishedLocked();
    entries_.push_back(std::make_unique<Entry>());
    Entry* entry = entries_.back().get();
    entry->owner = getpid();
    entry->server = std::move(server);
    std::thread([this, entry] {
      nameThisThread("braid-root");
      entry->server->run();
      std::lock_guard<std::mutex> done(mu_);
      entry->done = true;  // the last this thread does with the entry
      doneChanged_.notify_all();
    }).detach();
  }

  void stopAll() {
    std::unique_lock<std::mutex> lock(mu_);
    forgetForeignLocked();
    for (auto& e : entries_) e->server->stop();
    doneChanged_.wait(lock, [&] {
      return std::all_of(entries_.begin(), entries_.end(), [](const auto& e) { return e->done; });
    });
    entries_.clear();
  }

  int running() {
    std::lock_guard<std::mutex> lock(mu_);
    reapFinishedLocked();
    return static_cast<int>(entries_.size());
  }

 private:
  struct Entry {
    pid_t owner = 0;
    std::unique_ptr<RootServer> server;
    bool done = false;  // under mu_: the thread no longer touches this entry
  };
  void forgetForeignLocked() {
    // Never destroyed (and still reachable, so leak checkers stay quiet).
    static auto* forgotten = new std::vector<std::unique_ptr<Entry>>();
    pid_t self = getpid();
    std::erase_if(entries_, [self](std::unique_ptr<Entry>& e) {
      if (e->owner == self) return false;
      forgotten->push_back(std::move(e));
      return true;
    });
  }
  void reapFinishedLocked() {
    forgetForeignLocked();
    std::erase_if(entries_, [](const std::unique_ptr<Entry>& e) { return e->done; });
  }
  std::mutex mu_;
  std::condition_variable doneChanged_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

RootOptions resolve(const RootOptions& options) {
  RootOptions out = options;
  if (out.idleTimeoutMs < 0) out.idleTimeoutMs = static_cast<int>(env::getInt("BRAID_TIMEOUT_MS"));
  return out;
}

Status serve(net::Fd listener, const net::SocketAddress& bound, const transport::Secret& secret,
             const RootOptions& options) {
  auto server = std::make_unique<RootServer>(std::move(listener), secret, resolve(options),
                                             bound.toString());
  BRAID_RETURN_IF_ERROR(server->init());
  BRAID_INFO("rendezvous root listening at %s", bound.toString().c_str());
  Registry::get().start(std::move(server));
  return Status::ok();
}

int familyFromEnv() {
  std::string f = env::getString("BRAID_SOCKET_FAMILY");
  if (f == "AF_INET") return AF_INET;
  if (f == "AF_INET6") return AF_INET6;
  return AF_UNSPEC;
}

net::SocketAddress anyAddress(int family, uint16_t port) {
  net::SocketAddress a;
  if (family == AF_INET6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
    s6->sin6_family = AF_INET6;
    s6->sin6_addr = in6addr_any;
    a.length = sizeof(sockaddr_in6);
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&a.storage);
    s4->sin_family = AF_INET;
    s4->sin_addr.s_addr = htonl(INADDR_ANY);
    a.length = sizeof(sockaddr_in);
  }
  a.setPort(port);
  return a;
}

constexpr int kBacklog = 4096;  // a whole job's ranks may arrive at once

}  // namespace

Status startRoot(const std::string& ifSelector, UniqueId* out, const RootOptions& options) {
  std::vector<net::Interface> ifaces;
  BRAID_RETURN_IF_ERROR(net::findInterfaces(ifSelector, familyFromEnv(), &ifaces));
  if (ifaces.empty())
    return invalidUsage("no network interface that is up matches BRAID_SOCKET_IFNAME='" +
                        ifSelector + "' for the rendezvous root");
  net::Fd listener;
  net::SocketAddress bound;
  BRAID_RETURN_IF_ERROR(net::listenOn(ifaces[0].address, kBacklog, &listener, &bound)
                            .prefix("rendezvous root on " + ifaces[0].name));
  UniqueId id;
  id.root = bound;
  BRAID_RETURN_IF_ERROR(net::randomBytes(id.secret.data(), id.secret.size()));
  BRAID_RETURN_IF_ERROR(serve(std::move(listener), bound, id.secret, options));
  *out = id;
  return Status::ok();
}

Status startRootAt(const net::SocketAddress& addr, const transport::Secret& secret,
                   const RootOptions& options, net::SocketAddress* bound) {
  net::Fd listener;
  net::SocketAddress local;
  Status st = net::listenOn(addr, kBacklog, &listener, &local);
  if (!st.isOk()) {
    // The address may name this host from outside only (NAT, a load balancer's
    // name): serve the port on every local address instead.
    BRAID_INFO("rendezvous root: cannot listen at %s (%s); trying every local address",
               addr.toString().c_str(), st.message().c_str());
    Status any = net::listenOn(anyAddress(addr.family(), addr.port()), kBacklog, &listener, &local);
    if (!any.isOk())
      return any.prefix("rendezvous root: cannot listen at " + addr.toString() + " (" +
                        st.message() + ") nor on port " + std::to_string(addr.port()) +
                        " of every address");
  }
  BRAID_RETURN_IF_ERROR(serve(std::move(listener), local, secret, options));
  if (bound) *bound = local;
  return Status::ok();
}

void stopAllRoots() { Registry::get().stopAll(); }

int runningRoots() { return Registry::get().running(); }

}  // namespace braid::bootstrap
