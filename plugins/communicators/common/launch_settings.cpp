#include "launch_settings.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <tuple>

#include "dtnn/log.hpp"

namespace dtnn_net {

namespace {

// An integer parameter, or the environment's.
int int_setting(const dtnn::Params& p, const char* key, std::initializer_list<const char*> names) {
  if (!p.is_null(key)) return static_cast<int>(p.get_int(key));
  const std::string v = environment(names);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0 || n > 1 << 20) {
    std::string list;
    for (const char* name : names) list += (list.empty() ? "" : " or ") + std::string(name);
    p.fail(key, v.empty() ? "an integer (or the environment's " + list + ")"
                          : "an integer; the environment's " + list + " is \"" + v + "\"");
  }
  return static_cast<int>(n);
}

std::string file_setting(const dtnn::Params& p, const char* key, const char* variable) {
  const std::string given = p.get_string(key);
  return given.empty() ? environment({variable}) : given;
}

}  // namespace

std::string environment(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (const char* v = std::getenv(n); v && *v) return v;
  return "";
}

std::pair<int, int> rank_and_world_size(const dtnn::Params& p) {
  const int rank = int_setting(p, "rank", {"RANK", "PYMPI_RANK"});
  const int size = int_setting(p, "world_size", {"WORLD_SIZE", "PYMPI_SIZE"});
  if (size < 1) p.fail("world_size", "the number of ranks, >= 1");
  if (rank >= size)
    p.fail("rank", "a rank from 0 to world_size - 1 = " + std::to_string(size - 1) + ", got " +
                       std::to_string(rank));
  return {rank, size};
}

std::string address_setting(const dtnn::Params& p, const char* key,
                            std::initializer_list<std::pair<const char*, const char*>> variables,
                            const char* default_port) {
  if (!p.is_null(key)) return p.get_string(key);
  std::string names;
  for (auto [host, port] : variables) {
    if (const std::string h = environment({host}); !h.empty())
      return h + ":" + (environment({port}).empty() ? default_port : environment({port}));
    names += (names.empty() ? "" : " or ") + std::string(host) + " and " + port;
  }
  p.fail(key, "host:port (or the environment's " + names + ")");
}

TlsFiles tls_files(const dtnn::Params& p) {
  TlsFiles files{file_setting(p, "tls_ca", "DTNN_TLS_CA"),
                 file_setting(p, "tls_cert", "DTNN_TLS_CERT"),
                 file_setting(p, "tls_key", "DTNN_TLS_KEY")};
  if (!files.on()) return files;
  const std::pair<const std::string*, const char*> each[] = {
      {&files.ca, "tls_ca"}, {&files.cert, "tls_cert"}, {&files.key, "tls_key"}};
  for (auto [value, key] : each)
    if (value->empty())
      p.fail(key,
             "a PEM file (TLS takes tls_ca, tls_cert and tls_key together; "
             "scripts/make-test-ca.sh makes a test set)");
  for (auto [value, key] : each)
    if (!std::ifstream(*value)) p.fail(key, "a readable PEM file; cannot open \"" + *value + "\"");
  return files;
}

StarSettings star_settings(const dtnn::Params& p) {
  StarSettings s;
  std::tie(s.rank, s.size) = rank_and_world_size(p);
  s.server = parse_host_port(
      address_setting(p, "server", {{"MASTER_ADDR", "MASTER_PORT"}, {"PYMPI_ADDR", "PYMPI_PORT"}},
                      "29500"),
      p.key_path("server"));
  s.connect_s = p.get_double("connect_timeout_s");
  if (!(s.connect_s >= 0)) p.fail("connect_timeout_s", "a number of seconds >= 0 (0: forever)");
  s.tls = tls_files(p);
  s.bind_ranks = p.get_bool("tls_bind_ranks");
  if (s.bind_ranks && !s.tls.on())
    p.fail("tls_bind_ranks",
           "false without TLS (tls_ca, tls_cert, tls_key): it binds ranks to their certificates");
  return s;
}

void warn_in_clear(const std::string& transport, const HostPort& server) {
  dtnn::log_warning(transport +
                    ": no TLS (parallel.communicator.tls_ca, tls_cert, tls_key): gradients and "
                    "weights cross the network in clear, and any process that reaches " +
                    server.text() + " could have joined as a rank (docs/federated.md)");
}

std::string describe_star(const std::string& transport, int rank, int size, const HostPort& server,
                          const std::string& security) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return transport + ": rank " + std::to_string(rank) + " of " + std::to_string(size) + " on " +
         host + ", rank 0 at " + server.text() + ", " + security;
}

}  // namespace dtnn_net
