// What a communicator that needs no MPI job reads to find its place in the run: its rank, the world
// size, the address it dials, and its TLS files, each from parallel.communicator's parameters or,
// when a parameter is null or empty, from the environment as launchers set it (torchrun's RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT; PyDTNN 3.x's PYMPI_*; dtnn's DTNN_TLS_*).
#pragma once
#include <initializer_list>
#include <string>
#include <utility>

#include "dtnn/params.hpp"
#include "host_port.hpp"

namespace dtnn_net {

// The first of the environment variables that is set and not empty, or "".
std::string environment(std::initializer_list<const char*> names);

// This process's rank and the world size (rank < world_size), or an Error naming the key.
std::pair<int, int> rank_and_world_size(const dtnn::Params& p);

// The address at `key` ("host:port"), or the first of `variables`' host and port pairs that is set
// (the port defaulting to default_port).
std::string address_setting(const dtnn::Params& p, const char* key,
                            std::initializer_list<std::pair<const char*, const char*>> variables,
                            const char* default_port);

struct TlsFiles {
  std::string ca, cert, key;
  bool on() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

// tls_ca, tls_cert and tls_key, or DTNN_TLS_CA, DTNN_TLS_CERT and DTNN_TLS_KEY; all three or none
// (an Error naming the missing key), each a readable file.
TlsFiles tls_files(const dtnn::Params& p);

// What a transport whose ranks dial rank 0 reads (tcp, grpc; their parameters are kStarParameters):
// its place in the run, rank 0's address (`server`, or MASTER_ADDR and MASTER_PORT, or PYMPI_ADDR
// and PYMPI_PORT; port 29500 by default), how long the ranks may take to meet, the TLS files, and
// whether certificates bind ranks (only with TLS). An Error naming the key when one is wrong.
struct StarSettings {
  int rank = 0, size = 1;
  HostPort server;
  double connect_s = 60;
  TlsFiles tls;
  bool bind_ranks = false;
};
StarSettings star_settings(const dtnn::Params& p);
// Rank 0's warning, when such a transport runs without TLS, that the exchange is in clear.
void warn_in_clear(const std::string& transport, const HostPort& server);
// The line `dtnn info` prints: "tcp: rank 1 of 4 on HOST, rank 0 at SERVER, SECURITY".
std::string describe_star(const std::string& transport, int rank, int size, const HostPort& server,
                          const std::string& security);
inline constexpr const char* kStarParameters = R"({"rank": null, "world_size": null,
    "server": null, "tls_ca": "", "tls_cert": "", "tls_key": "", "tls_bind_ranks": false,
    "connect_timeout_s": 60})";

}  // namespace dtnn_net
