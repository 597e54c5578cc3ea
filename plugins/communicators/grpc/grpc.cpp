// grpc: the Communicator over gRPC streams (Debian's libgrpc++), for processes started by hand, by
// a script or on different machines, with no MPI job: rank 0 serves at `server`, each other rank
// keeps one bidirectional stream to it (meeting.hpp), and the collectives run as a star through
// rank 0 (common/star.hpp, as tcp's: rank 0 sums in rank order and every rank gets the same bytes).
// TLS with mutual certificates when the run gives tls_ca, tls_cert and tls_key (gRPC's handshake
// checks both sides); without them a warning says the exchange is in clear. Collectives run in call
// order on a thread of their own (queued_communicator.hpp); an error (a peer gone, a frame not the
// one due, the timeout) names the peer and the collective.
#include <memory>
#include <string>

#include "dtnn/communicator.hpp"
#include "dtnn/plugin_api.hpp"
#include "host_port.hpp"
#include "launch_settings.hpp"
#include "link.hpp"
#include "meeting.hpp"
#include "queued_communicator.hpp"
#include "star.hpp"

namespace {

using namespace dtnn;
using namespace dtnn_net;
using dtnn_grpc::Link;

class Grpc final : public QueuedCommunicator<Star<Link>> {
 public:
  explicit Grpc(const Params& p) : QueuedCommunicator("grpc") {
    const StarSettings settings = star_settings(p);
    rank_ = settings.rank, size_ = settings.size, server_ = settings.server;
    if (settings.tls.on())
      pem_ = std::make_unique<dtnn_grpc::Pem>(dtnn_grpc::read_pem(settings.tls));
    const Deadline deadline = Deadline::after(settings.connect_s);
    std::vector<std::unique_ptr<Link>> links;
    if (size_ > 1 && rank_ == 0) {
      rank0_ = std::make_unique<dtnn_grpc::Rank0>(server_, size_, pem_.get(), settings.bind_ranks);
      links = rank0_->gather(deadline);
    }
    if (size_ > 1 && rank_ != 0)
      links.push_back(dtnn_grpc::join_rank0(server_, rank_, size_, pem_.get(), deadline));
    collectives_ = std::make_unique<Star<Link>>(rank_, size_, std::move(links), "grpc");
    if (!pem_ && size_ > 1 && rank_ == 0) warn_in_clear("grpc", server_);
  }

  // The streams close before rank 0 stops serving: its service's calls end with them.
  ~Grpc() override {
    try {
      queue_.run("closing", [](std::uint64_t, Deadline) {});  // what is queued runs first
    } catch (const std::exception&) {  // a collective failed before: nothing more is sent
    }
    collectives_.reset();
    rank0_.reset();
  }

  std::string describe() const override {
    return describe_star("grpc", rank_, size_, server_, pem_ ? "TLS (mutual)" : "no TLS");
  }

 private:
  HostPort server_;
  std::unique_ptr<dtnn_grpc::Pem> pem_;
  std::unique_ptr<dtnn_grpc::Rank0> rank0_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Grpc(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "communicator", .name = "grpc",
                   .description =
                       "collectives over gRPC streams (TLS with mutual certificates): "
                       "processes started by hand, no MPI job (docs/federated.md)",
                   .parameters = kStarParameters, .factory = create)
