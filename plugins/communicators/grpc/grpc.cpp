// grpc: the Communicator over gRPC streams (Debian's libgrpc++), for processes started by hand, by
// a script or on different machines, with no MPI job: rank 0 serves at `server`, each other rank
// keeps one bidirectional stream to it (meeting.hpp), and the collectives run as a star through
// rank 0 (common/star.hpp, as tcp's: rank 0 sums in rank order and every rank gets the same bytes).
// TLS with mutual certificates when the run gives tls_ca, tls_cert and tls_key (gRPC's handshake
// checks both sides); without them a warning says the exchange is in clear. Collectives run in call
// order on a thread of their own (queued_communicator.hpp); an error (a peer gone, a frame not the
// one due, the timeout) names the peer and the collective.
#include <unistd.h>

#include <memory>
#include <string>
#include <tuple>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
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

constexpr const char* kParameters = R"({"rank": null, "world_size": null, "server": null,
    "tls_ca": "", "tls_cert": "", "tls_key": "", "tls_bind_ranks": false,
    "connect_timeout_s": 60})";

class Grpc final : public QueuedCommunicator<Star<Link>> {
 public:
  explicit Grpc(const Params& p) : QueuedCommunicator("grpc") {
    std::tie(rank_, size_) = rank_and_world_size(p);
    server_ = parse_host_port(
        address_setting(p, "server", {{"MASTER_ADDR", "MASTER_PORT"}, {"PYMPI_ADDR", "PYMPI_PORT"}},
                        "29500"),
        p.key_path("server"));
    const double connect_s = p.get_double("connect_timeout_s");
    if (!(connect_s >= 0)) p.fail("connect_timeout_s", "a number of seconds >= 0 (0: forever)");
    const TlsFiles files = tls_files(p);
    if (files.on()) pem_ = std::make_unique<dtnn_grpc::Pem>(dtnn_grpc::read_pem(files));
    const bool bind_ranks = p.get_bool("tls_bind_ranks");
    if (bind_ranks && !pem_)
      p.fail("tls_bind_ranks",
             "false without TLS (tls_ca, tls_cert, tls_key): it binds ranks to "
             "their certificates");
    const Deadline deadline = Deadline::after(connect_s);
    std::vector<std::unique_ptr<Link>> links;
    if (size_ > 1 && rank_ == 0) {
      rank0_ = std::make_unique<dtnn_grpc::Rank0>(server_, size_, pem_.get(), bind_ranks);
      links = rank0_->gather(deadline);
    }
    if (size_ > 1 && rank_ != 0)
      links.push_back(dtnn_grpc::join_rank0(server_, rank_, size_, pem_.get(), deadline));
    collectives_ = std::make_unique<Star<Link>>(rank_, size_, std::move(links), "grpc");
    if (!pem_ && size_ > 1 && rank_ == 0)
      log_warning(
          "grpc: no TLS (parallel.communicator.tls_ca, tls_cert, tls_key): gradients and "
          "weights cross the network in clear, and any process that reaches " +
          server_.text() + " could have joined as a rank (docs/federated.md)");
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
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return "grpc: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " on " + host +
           ", rank 0 at " + server_.text() + (pem_ ? ", TLS (mutual)" : ", no TLS");
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
                   .parameters = kParameters, .factory = create)
