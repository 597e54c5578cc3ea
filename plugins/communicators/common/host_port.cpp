#include "host_port.hpp"

#include <cstdlib>

#include "dtnn/error.hpp"

namespace dtnn_net {

std::string HostPort::text() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

HostPort parse_host_port(const std::string& text, const std::string& key) {
  HostPort out;
  std::size_t colon;
  if (text.starts_with("[")) {
    const std::size_t close = text.find(']');
    colon = close == std::string::npos ? close : close + 1;
    if (close != std::string::npos) out.host = text.substr(1, close - 1);
  } else {
    colon = text.rfind(':');
    if (colon != std::string::npos) out.host = text.substr(0, colon);
  }
  if (colon == std::string::npos || colon >= text.size() || text[colon] != ':' || out.host.empty())
    throw dtnn::Error(key + ": expected host:port (e.g. 10.0.0.1:29500 or [::1]:29500), got \"" +
                      text + "\"");
  out.port = text.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(out.port.c_str(), &end, 10);
  if (out.port.empty() || *end != '\0' || port < 1 || port > 65535)
    throw dtnn::Error(key + ": the port of \"" + text + "\" is not a number from 1 to 65535");
  return out;
}

}  // namespace dtnn_net
