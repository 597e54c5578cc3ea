#include "launch_settings.hpp"

#include <cstdlib>
#include <fstream>

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

}  // namespace dtnn_net
