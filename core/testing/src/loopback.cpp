#include "dtnn/testing/loopback.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "dtnn/communicator.hpp"

namespace dtnn::testing {

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t length = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
  ::close(fd);
  return ntohs(a.sin_port);
}

nlohmann::json loopback_tcp_parameters(Communicator& job) {
  double port = job.rank() == 0 ? free_loopback_port() : 0;
  job.broadcast(&port, 1, DType::float64, 0, "tcp port");
  return {{"rank", job.rank()},
          {"world_size", job.size()},
          {"server", "127.0.0.1:" + std::to_string(static_cast<int>(port))}};
}

}  // namespace dtnn::testing
