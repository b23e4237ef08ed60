#include "measure.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "netns.h"
#include "topology.h"

namespace braid::fabric {

namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

sockaddr_in ipv4(const std::string& addr, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, addr.c_str(), &sa.sin_addr);
  return sa;
}

bool fail(std::string* error, const std::string& what) {
  *error = what + ": " + std::strerror(errno);
  return false;
}

// A connected pair: *rx accepted in host `to`, *tx connected from host `from`.
bool connectPair(const std::string& fabric, int from, int to, Fd* tx, Fd* rx, std::string* error) {
  Fd listener(tcpSocketIn(hostNamespace(fabric, to), 0, error));
  if (listener.get() < 0) return false;
  sockaddr_in at = ipv4(hostAddress(to), 0);
  socklen_t len = sizeof(at);
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) return fail(error, "bind");
  if (listen(listener.get(), 1) != 0) return fail(error, "listen");
  if (getsockname(listener.get(), reinterpret_cast<sockaddr*>(&at), &len) != 0)
    return fail(error, "getsockname");

  tx->reset(tcpSocketIn(hostNamespace(fabric, from), SOCK_NONBLOCK, error));
  if (tx->get() < 0) return false;
  if (connect(tx->get(), reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0 && errno != EINPROGRESS)
    return fail(error, "connect to " + hostAddress(to));
  pollfd p{listener.get(), POLLIN, 0};
  if (poll(&p, 1, 3000) != 1) {
    *error = "no connection from " + hostAddress(from) + " to " + hostAddress(to) + " within 3 s";
    return false;
  }
  rx->reset(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (rx->get() < 0) return fail(error, "accept");
  // The sender blocks from now on, but never for more than a second a write.
  fcntl(tx->get(), F_SETFL, 0);
  timeval oneSecond{1, 0};
  setsockopt(tx->get(), SOL_SOCKET, SO_SNDTIMEO, &oneSecond, sizeof(oneSecond));
  return true;
}

void sendUntil(int fd, Clock::time_point end, const std::atomic<bool>* quit) {
  std::vector<char> buf(256 * 1024, 'b');
  while (Clock::now() < end && !quit->load()) {
    if (send(fd, buf.data(), buf.size(), MSG_NOSIGNAL) < 0 && errno != EINTR && errno != EAGAIN) break;
  }
  shutdown(fd, SHUT_WR);
}

}  // namespace

std::optional<LinkMeasurement> measureLink(const std::string& fabric, int from, int to, double seconds,
                                           const volatile std::sig_atomic_t* stop, std::string* error) {
  seconds = std::clamp(seconds, 0.2, 30.0);
  Fd tx, rx;
  if (!connectPair(fabric, from, to, &tx, &rx, error)) return std::nullopt;

  const auto span = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto warmup = std::min(span / 4, Clock::duration(std::chrono::milliseconds(250)));
  const Clock::time_point start = Clock::now();
  const Clock::time_point giveUp = start + span + std::chrono::seconds(5);
  std::atomic<bool> quit{false};
  std::thread sender(sendUntil, tx.get(), start + span, &quit);

  std::vector<char> buf(1 << 20);
  uint64_t total = 0, atMark = 0;
  Clock::time_point mark{}, last = start;
  bool eof = false;
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (now >= giveUp || *stop != 0) break;
    pollfd p{rx.get(), POLLIN, 0};
    // Short waits, so that a stop request is seen even if no signal
    // interrupts poll (it was delivered to the sender thread).
    const int waitMs = static_cast<int>(
        std::min<long>(100, std::chrono::duration_cast<std::chrono::milliseconds>(giveUp - now).count() + 1));
    if (poll(&p, 1, waitMs) < 0 && errno != EINTR) break;
    const ssize_t n = recv(rx.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n == 0) {
      eof = true;
      break;
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      break;
    }
    last = Clock::now();
    total += static_cast<uint64_t>(n);
    if (mark == Clock::time_point{} && last - start >= warmup) mark = last, atMark = total;
  }
  quit = true;
  sender.join();
  if (*stop != 0) {
    *error = "interrupted";
    return std::nullopt;
  }
  if (!eof) {
    *error = "the stream from " + hostAddress(from) + " to " + hostAddress(to) + " did not finish in time";
    return std::nullopt;
  }
  LinkMeasurement m;
  m.seconds = std::chrono::duration<double>(last - mark).count();
  m.bytes = total - atMark;
  if (mark == Clock::time_point{} || m.seconds <= 0 || m.bytes == 0) {
    *error = "no data crossed the link after the warm-up";
    return std::nullopt;
  }
  m.bitsPerSec = static_cast<double>(m.bytes) * 8 / m.seconds;
  return m;
}

}  // namespace braid::fabric
