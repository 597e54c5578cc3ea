// How the ranks of a grpc run meet. Rank 0 serves the Star service (star.proto) at the server
// address; each other rank opens one Join stream and says hello (its rank, the world size). Rank 0
// lets each rank in once, as tcp's does (admission.hpp: the same world size, a rank not yet taken,
// with TLS a certificate that allows it), answering welcome or a refusal with the reason; a refused
// stream is named in rank 0's log and rank 0 goes on waiting for the real ranks. With TLS, each
// side presents a certificate in gRPC's handshake; a joining rank checks rank 0's against the run's
// authority there, rank 0 checks the joining rank's after it (refused and named when the authority
// did not sign it).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "host_port.hpp"
#include "launch_settings.hpp"
#include "link.hpp"

namespace grpc {
class Server;
}

namespace dtnn_grpc {

// The run's TLS files' contents (PEM).
struct Pem {
  std::string ca, cert, key;
};
Pem read_pem(const dtnn_net::TlsFiles& files);

class Rank0 {
 public:
  // Listens at `server` (an Error naming it when it cannot).
  Rank0(const dtnn_net::HostPort& server, int world_size, const Pem* tls, bool bind_ranks);
  ~Rank0();  // stops serving (the links it gave must be gone)
  // The stream to each other rank, by rank (entry 0 empty), once all have joined; an Error naming
  // the missing ranks past the deadline.
  std::vector<std::unique_ptr<Link>> gather(Deadline deadline);

 private:
  class Service;
  dtnn_net::HostPort server_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
};

// Any other rank: its stream to rank 0, welcomed (an Error with rank 0's reason when refused).
std::unique_ptr<Link> join_rank0(const dtnn_net::HostPort& server, int rank, int world_size,
                                 const Pem* tls, Deadline deadline);

}  // namespace dtnn_grpc
