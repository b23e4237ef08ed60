#include "core/trace_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <mutex>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/thread_name.h"
#include "core/communicator.h"

namespace braid::core {
namespace {

int wakePipe[2] = {-1, -1};

void onSignal(int) {
  const int saved = errno;
  char byte = 1;
  ssize_t ignored = write(wakePipe[1], &byte, 1);  // async-signal-safe
  (void)ignored;
  errno = saved;
}

struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<Communicator>> comms;
  bool installed = false;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: the watcher may outlive statics
  return *r;
}

void watcher() {
  nameThisThread("braid-sigusr1");
  char buf[64];
  for (;;) {
    ssize_t n = read(wakePipe[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::vector<std::shared_ptr<Communicator>> live;
    {
      std::lock_guard<std::mutex> lock(registry().mu);
      auto& comms = registry().comms;
      for (auto it = comms.begin(); it != comms.end();) {
        if (auto c = it->lock()) {
          live.push_back(std::move(c));
          ++it;
        } else {
          it = comms.erase(it);
        }
      }
    }
    for (auto& c : live) {
      Status st = c->dumpTrace("");
      if (st.isOk())
        BRAID_WARN("SIGUSR1: flight recorder of rank %d written to %s", c->rank(), c->defaultTracePath().c_str());
      else
        BRAID_WARN("SIGUSR1: %s", st.message().c_str());
    }
  }
}

bool install() {
  struct sigaction current {};
  if (sigaction(SIGUSR1, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) {
    BRAID_INFO("SIGUSR1 already has a handler: flight-recorder dumps only through braidCommDumpTrace");
    return false;
  }
  if (pipe2(wakePipe, O_CLOEXEC) != 0) return false;
  std::thread(watcher).detach();
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  return sigaction(SIGUSR1, &action, nullptr) == 0;
}

}  // namespace

void watchForTraceSignal(const std::shared_ptr<Communicator>& comm) {
  std::lock_guard<std::mutex> lock(registry().mu);
  if (!registry().installed) {
    registry().installed = true;  // one attempt per process, whatever its outcome
    install();
  }
  registry().comms.push_back(comm);
}

}  // namespace braid::core
