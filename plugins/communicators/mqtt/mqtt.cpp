// mqtt: the Communicator through an MQTT broker (Mosquitto, or any MQTT 3.1.1 broker), for clients
// that reach a broker but not each other: processes started by hand, by a script or on different
// machines, with no MPI job. The ranks meet through the broker (meeting.hpp), then rank 0 sums
// and publishes the result once for all (hub.hpp). TLS 1.3 with this rank's certificate when the
// run gives tls_ca, tls_cert and tls_key (the broker checks the certificate, the rank checks the
// broker's); without them a warning says the exchange is in clear. Collectives run in call order on
// a thread of their own (queued_communicator.hpp), so a non-blocking allreduce proceeds while
// backward computes; an error (a rank gone, a malformed message, the timeout, the broker lost)
// names the rank and the collective, and fails it and every later one.
#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "broker_link.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "hub.hpp"
#include "launch_settings.hpp"
#include "meeting.hpp"
#include "queued_communicator.hpp"

namespace {

using namespace dtnn;
using namespace dtnn_mqtt;
using dtnn_net::QueuedCommunicator;

constexpr const char* kParameters = R"({"rank": null, "world_size": null, "broker": null,
    "topic": "dtnn", "tls_ca": "", "tls_cert": "", "tls_key": "", "connect_timeout_s": 60,
    "qos": 1, "chunk_bytes": 4194304, "keepalive_s": 30})";

// A topic prefix: MQTT topic levels without wildcards ('+', '#'), not starting with '$'.
std::string topic_setting(const Params& p) {
  const std::string t = p.get_string("topic");
  if (t.empty() || t.size() > 200 || t.front() == '$' || t.front() == '/' || t.back() == '/' ||
      t.find_first_of("+#") != std::string::npos || t.find('\0') != std::string::npos)
    p.fail("topic",
           "an MQTT topic prefix without wildcards, e.g. \"dtnn/experiment-7\" (a run's topics "
           "are <topic>/session, <topic>/up/<rank> and <topic>/down)");
  return t;
}

class Mqtt final : public QueuedCommunicator<Hub> {
 public:
  explicit Mqtt(const Params& p) : QueuedCommunicator("mqtt") {
    std::tie(rank_, size_) = dtnn_net::rank_and_world_size(p);
    LinkOptions o;
    o.rank = rank_;
    o.size = size_;
    o.broker = dtnn_net::parse_host_port(
        dtnn_net::address_setting(p, "broker", {{"DTNN_MQTT_HOST", "DTNN_MQTT_PORT"}}, "1883"),
        p.key_path("broker"));
    o.topic = topic_setting(p);
    o.tls = dtnn_net::tls_files(p);
    const std::int64_t qos = p.get_int("qos");
    if (qos < 0 || qos > 2)
      p.fail("qos",
             "0, 1 or 2 (MQTT's delivery guarantee: 1, the broker acknowledges each message; 0, "
             "faster, a message the broker drops fails the collective at parallel.timeout_s)");
    o.qos = static_cast<int>(qos);
    const std::int64_t keepalive = p.get_int("keepalive_s");
    if (keepalive < 5 || keepalive > 65535) p.fail("keepalive_s", "seconds from 5 to 65535");
    o.keepalive_s = static_cast<int>(keepalive);
    const std::int64_t chunk = p.get_int("chunk_bytes");
    if (chunk < 1024 || chunk > (256 << 20) || chunk % 8 != 0)
      p.fail("chunk_bytes", "a multiple of 8 from 1024 to 268435456 (256 MiB, MQTT's limit)");
    const double connect_s = p.get_double("connect_timeout_s");
    if (!(connect_s >= 0)) p.fail("connect_timeout_s", "a number of seconds >= 0 (0: forever)");
    const Deadline deadline = Deadline::after(connect_s);

    Session session{};
    if (rank_ == 0) session = o.will_session = new_session();
    o.nonce = rank_ == 0 ? 0 : new_nonce();
    auto link = std::make_unique<BrokerLink>(o, deadline);
    std::vector<std::uint64_t> nonces;
    if (size_ > 1 && rank_ == 0) nonces = welcome_ranks(*link, size_, session, deadline);
    if (size_ > 1 && rank_ != 0) session = join_run(*link, rank_, size_, o.nonce, deadline);
    collectives_ = std::make_unique<Hub>(std::move(link), rank_, size_, session,
                                         static_cast<std::size_t>(chunk), std::move(nonces));
    description_ = "mqtt: rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                   ", broker " + o.broker.text() + ", topic " + o.topic +
                   (o.tls.on() ? ", TLS 1.3 (mutual)" : ", no TLS");
    if (!o.tls.on() && size_ > 1 && rank_ == 0)
      log_warning(
          "mqtt: no TLS (parallel.communicator.tls_ca, tls_cert, tls_key): gradients and "
          "weights cross the network in clear, and any client of the broker at " +
          o.broker.text() + " could read them or join as a rank (docs/federated.md)");
  }

  std::string describe() const override { return description_; }

 private:
  std::string description_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Mqtt(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "communicator", .name = "mqtt",
                   .description =
                       "collectives through an MQTT broker (Mosquitto; TLS 1.3 with mutual "
                       "certificates): processes started by hand, no MPI job (docs/federated.md)",
                   .parameters = kParameters, .factory = create)
