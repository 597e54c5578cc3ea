// tcp: the Communicator over TCP connections between processes started by hand, by a script or
// on different machines, with no MPI job: rank 0 listens at `server`, the others connect to it
// (common/star.hpp: rank 0 sums and forwards). TLS 1.3 with mutual certificate authentication when
// the run gives tls_ca, tls_cert and tls_key; without them a warning says the exchange is in clear.
// A certificate named for a rank admits that rank only; tls_bind_ranks requires one of every rank.
// Collectives run in call order on a thread of their own (queued_communicator.hpp), so a
// non-blocking allreduce proceeds while backward computes; an error (a peer gone, a malformed
// frame, the timeout) names the peer and the collective, and fails that collective and every later
// one.
#include <signal.h>

#include <memory>
#include <string>
#include <string_view>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "endpoint.hpp"
#include "launch_settings.hpp"
#include "queued_communicator.hpp"
#include "rendezvous.hpp"
#include "star.hpp"
#include "tls.hpp"

namespace {

using namespace dtnn;
using namespace dtnn_tcp;
using namespace dtnn_net;
using dtnn_net::Deadline;

class Tcp final : public QueuedCommunicator<Star<Stream>> {
 public:
  explicit Tcp(const Params& p) : QueuedCommunicator("tcp") {
    const StarSettings settings = star_settings(p);
    rank_ = settings.rank, size_ = settings.size, server_ = settings.server;
    if (settings.tls.on()) tls_ = std::make_unique<TlsContext>(settings.tls, rank_ == 0, p.where());
    ::signal(SIGPIPE, SIG_IGN);  // a peer gone mid-send is an error to report, not a signal
    const Deadline deadline = Deadline::after(settings.connect_s);
    std::vector<std::unique_ptr<Stream>> links;
    if (size_ > 1 && rank_ == 0)
      links = gather_ranks(server_, size_, tls_.get(), deadline, settings.bind_ranks);
    if (size_ > 1 && rank_ != 0)
      links.push_back(join_rank0(server_, rank_, size_, tls_.get(), deadline));
    collectives_ = std::make_unique<Star<Stream>>(rank_, size_, std::move(links), "tcp");
    if (!tls_ && size_ > 1 && rank_ == 0) warn_in_clear("tcp", server_);
  }

  std::string describe() const override {
    return describe_star("tcp", rank_, size_, server_, tls_ ? "TLS 1.3 (mutual)" : "no TLS");
  }

 private:
  HostPort server_;
  std::unique_ptr<TlsContext> tls_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Tcp(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "communicator", .name = "tcp",
                   .description =
                       "collectives over TCP (TLS 1.3 with mutual certificates): "
                       "processes started by hand, no MPI job (docs/federated.md)",
                   .parameters = kStarParameters, .factory = create)
