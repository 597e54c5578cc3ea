#include "endpoint.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "dtnn/error.hpp"

namespace dtnn_tcp {

using dtnn::Error;

namespace {

struct AddressList {
  addrinfo* list = nullptr;
  ~AddressList() {
    if (list) freeaddrinfo(list);
  }
};

void resolve(const HostPort& address, bool passive, AddressList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const int r = ::getaddrinfo(address.host.c_str(), address.port.c_str(), &hints, &out.list);
  if (r != 0) throw Error("tcp: cannot resolve " + address.text() + " (" + gai_strerror(r) + ")");
}

// Non-blocking, close-on-exec, no Nagle delay (collectives are request and answer).
void prepare(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string address_text(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

}  // namespace

int listen_on(const HostPort& address) {
  AddressList found;
  resolve(address, true, found);
  std::string why = "no address";
  for (addrinfo* a = found.list; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      prepare(fd);
      return fd;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  throw Error("tcp: rank 0 cannot listen on " + address.text() + " (" + why +
              "; the server must be an address of rank 0's host, its port free)");
}

int accept_before(int listener, Deadline deadline, std::string& peer) {
  for (;;) {
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    const int fd = ::accept(listener, reinterpret_cast<sockaddr*>(&from), &length);
    if (fd >= 0) {
      prepare(fd);
      peer = address_text(reinterpret_cast<const sockaddr*>(&from));
      return fd;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      throw Error(std::string("tcp: rank 0 cannot accept connections (") + std::strerror(errno) +
                  ")");
    pollfd p{listener, POLLIN, 0};
    const int r = ::poll(&p, 1, deadline.poll_ms());
    if (r == 0) return -1;
  }
}

int connect_before(const HostPort& address, Deadline deadline) {
  std::string why;
  do {
    AddressList found;
    resolve(address, false, found);
    for (addrinfo* a = found.list; a; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      prepare(fd);
      int r = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (r != 0 && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        r = ::poll(&p, 1, deadline.poll_ms()) == 1 ? 0 : -1;
        int error = r == 0 ? 0 : ETIMEDOUT;
        socklen_t length = sizeof error;
        if (r == 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        errno = error;
        r = error == 0 ? 0 : -1;
      }
      if (r == 0) return fd;
      why = std::strerror(errno);
      ::close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 0 may start later
  } while (!deadline.passed());
  throw Error("tcp: cannot reach rank 0 at " + address.text() + " within " +
              deadline.seconds_text() + " s (" + why +
              "; parallel.communicator.connect_timeout_s)");
}

}  // namespace dtnn_tcp
