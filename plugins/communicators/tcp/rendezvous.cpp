#include "rendezvous.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "admission.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "tls.hpp"

namespace dtnn_tcp {

using dtnn::Error;

namespace {

// A joining connection gets this long for its handshake, so that one that connects and says
// nothing holds the others up no longer.
constexpr double kHandshakeSeconds = 10;

// The shorter of the two.
Deadline sooner(Deadline a, Deadline b) {
  if (!a.limited()) return b;
  if (!b.limited()) return a;
  return a.at < b.at ? a : b;
}

struct Listener {
  int fd;
  ~Listener() { ::close(fd); }
};

}  // namespace

std::vector<std::unique_ptr<Stream>> gather_ranks(const HostPort& server, int world_size,
                                                  const TlsContext* tls, Deadline deadline,
                                                  bool bind_ranks) {
  std::vector<std::unique_ptr<Stream>> ranks(static_cast<std::size_t>(world_size));
  const Listener listener{listen_on(server)};
  int joined = 1;
  while (joined < world_size) {
    std::string address;
    const int fd = accept_before(listener.fd, deadline, address);
    if (fd < 0) {
      dtnn_net::throw_missing_ranks(
          "tcp", world_size, [&](int r) { return ranks[static_cast<std::size_t>(r)] != nullptr; },
          deadline, server);
    }
    auto link = std::make_unique<Stream>(fd, address);
    const Deadline handshake = sooner(deadline, Deadline::after(kHandshakeSeconds));
    std::string refusal;
    try {
      if (tls) link->start_tls(*tls, server.host, handshake);
      const std::vector<unsigned char> payload = link->read_control(FrameType::hello, handshake);
      Hello hello;
      try {
        hello = decode_hello(payload);
      } catch (const Error& e) {
        throw Error("tcp: " + address + ": " + e.what());
      }
      const std::string name = tls ? link->peer_common_name() : std::string();
      std::string holder;  // the peer holding that rank already
      if (hello.rank < ranks.size() && ranks[hello.rank]) holder = ranks[hello.rank]->peer();
      refusal = dtnn_net::admission_refusal(hello.rank, hello.world_size, world_size, holder,
                                            tls ? &name : nullptr, bind_ranks);
      if (!refusal.empty()) {
        link->send_frame({FrameType::refusal, 0, refusal.size()}, refusal.data(), handshake);
        throw Error("tcp: " + address + ": " + refusal);
      }
      link->send_frame({FrameType::welcome, 0, 0}, nullptr, handshake);
      link->set_peer("rank " + std::to_string(hello.rank) + " (" + address + ")");
      ranks[hello.rank] = std::move(link);
      ++joined;
    } catch (const Error& e) {
      dtnn::log_warning(std::string(e.what()) + ": connection refused; still waiting for " +
                        std::to_string(world_size - joined) + " rank(s)");
    }
  }
  return ranks;
}

std::unique_ptr<Stream> join_rank0(const HostPort& server, int rank, int world_size,
                                   const TlsContext* tls, Deadline deadline) {
  auto link =
      std::make_unique<Stream>(connect_before(server, deadline), "rank 0 (" + server.text() + ")");
  if (tls) link->start_tls(*tls, server.host, deadline);
  const std::vector<unsigned char> hello =
      encode_hello({static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(world_size)});
  try {
    link->send_frame({FrameType::hello, 0, hello.size()}, hello.data(), deadline);
    link->read_control(FrameType::welcome, deadline);
  } catch (const Error& e) {
    // TLS 1.3 ends this rank's handshake before rank 0 has checked its certificate: a refusal
    // then shows only as a closed connection.
    if (!tls || std::string_view(e.what()).find("refused this rank") != std::string_view::npos)
      throw;
    throw Error(std::string(e.what()) +
                " (rank 0 closes the connection of a rank whose certificate the run's authority "
                "did not sign: is tls_cert signed by the tls_ca rank 0 was given? Rank 0's log "
                "names the reason)");
  }
  return link;
}

}  // namespace dtnn_tcp
