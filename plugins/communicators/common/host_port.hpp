// "host:port" as users write it, for the communicators that dial a server or a broker.
#pragma once
#include <string>

namespace dtnn_net {

struct HostPort {
  std::string host, port;
  std::string text() const;  // "host:port", "[::1]:port"
  int port_number() const { return std::stoi(port); }
};

// "host:port" or "[v6 address]:port"; an Error naming `key` otherwise.
HostPort parse_host_port(const std::string& text, const std::string& key);

}  // namespace dtnn_net
