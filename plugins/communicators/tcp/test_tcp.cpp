// The tcp communicator on loopback: every collective against its definition, plain and over TLS;
// strangers, malformed frames, a rank that leaves and one that goes silent; and what crosses the
// wire, read and tampered with by a relay between two ranks. (Whole runs over tcp:
// tests/transport_runs.py.)
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/testing/loopback.hpp"
#include "test_support.hpp"
#include "wire_testing.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

using test::certificates;
using test::dial;
using test::on_every_rank;
using test::Relay;
using test::StderrCapture;
using testing::free_loopback_port;

using test::tls_params;

std::shared_ptr<Communicator> open_rank(int rank, int size, int port, bool tls,
                                        double connect_s = 20) {
  return test::open_star_rank("tcp", rank, size, port, tls, connect_s);
}

std::vector<std::shared_ptr<Communicator>> world(int n, int port, bool tls) {
  return test::star_world("tcp", n, port, tls);
}

// A frame header as the protocol writes it (frame.hpp), built here byte by byte.
std::array<unsigned char, 24> header(unsigned type, std::uint64_t seq, std::uint64_t length,
                                     const char* magic = "DTNN") {
  std::array<unsigned char, 24> h{};
  std::memcpy(h.data(), magic, 4);
  h[4] = 1;
  h[5] = static_cast<unsigned char>(type);
  for (int i = 0; i < 8; ++i) {
    h[8 + i] = static_cast<unsigned char>(seq >> (8 * i));
    h[16 + i] = static_cast<unsigned char>(length >> (8 * i));
  }
  return h;
}

void send_all(int fd, const void* data, std::size_t n) {
  REQUIRE(::send(fd, data, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n));
}

// A process that speaks the protocol by hand as rank `rank` of `size`: its hello sent.
int hand_made_rank(int port, std::uint32_t rank, std::uint32_t size) {
  const int fd = dial(port);
  const auto h = header(1, 0, 8);
  unsigned char hello[8] = {};
  for (int i = 0; i < 4; ++i) {
    hello[i] = static_cast<unsigned char>(rank >> (8 * i));
    hello[4 + i] = static_cast<unsigned char>(size >> (8 * i));
  }
  send_all(fd, h.data(), h.size());
  send_all(fd, hello, sizeof hello);
  return fd;
}

// Reads one frame header (5 s at most); its type byte, or -1 when the connection closed.
int read_frame_type(int fd, std::string* payload = nullptr) {
  pollfd p{fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  unsigned char h[24];
  std::size_t got = 0;
  while (got < 24) {
    const ssize_t n = ::recv(fd, h + got, 24 - got, 0);
    if (n <= 0) return -1;
    got += static_cast<std::size_t>(n);
  }
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(h[16 + i]) << (8 * i);
  std::string body(length, '\0');
  for (std::size_t done = 0; done < length;) {
    const ssize_t n = ::recv(fd, body.data() + done, length - done, 0);
    if (n <= 0) return -1;
    done += static_cast<std::size_t>(n);
  }
  if (payload) *payload = body;
  return h[5];
}

}  // namespace

TEST_CASE("tcp: every collective on 3 ranks as defined, plain and over TLS") {
  for (const bool tls : {false, true}) {
    CAPTURE(tls);
    const auto ranks = world(3, free_loopback_port(), tls);
    CHECK(ranks[1]->size() == 3);
    CHECK(ranks[2]->rank() == 2);
    CHECK(ranks[0]->describe().find(tls ? "TLS 1.3" : "no TLS") != std::string::npos);
    on_every_rank(ranks, test::check_three_rank_collectives);
  }
}

TEST_CASE("tcp: strangers are refused and named, and the real ranks meet anyway") {
  const int port = free_loopback_port();
  StderrCapture log;
  std::shared_ptr<Communicator> rank0, rank1;
  std::thread hub([&] { rank0 = open_rank(0, 2, port, true); });
  // Not a dtnn peer at all.
  const int web = dial(port);
  send_all(web, "GET / HTTP/1.1\r\n\r\n", 18);
  // A rank whose certificate another authority signed: it fails too, and says why.
  json p = {{"rank", 1}, {"world_size", 2}, {"server", "127.0.0.1:" + std::to_string(port)}};
  p.update(tls_params("other", false));
  const std::string stranger = test::error_of([&] {
    test::plugins().create_as<Communicator>("communicator", "tcp", Params(p, "stranger"));
  });
  CHECK_MESSAGE(
      stranger.find("whose certificate the run's authority did not sign") != std::string::npos,
      stranger);
  // The real rank 1 joins; the world works.
  rank1 = open_rank(1, 2, port, true);
  hub.join();
  ::close(web);
  const std::string text = log.text();
  CHECK(text.find("connection refused; still waiting for 1 rank(s)") != std::string::npos);
  CHECK(text.find("tcp: 127.0.0.1:") != std::string::npos);  // the stranger, by address
  CHECK(text.find("TLS failed while authenticating") != std::string::npos);
  on_every_rank({rank0, rank1}, [](int, Communicator& c) {
    float x = 1;
    c.allreduce_sum(&x, 1, DType::float32, "x");
    CHECK(x == 2);
  });
}

TEST_CASE(
    "tcp: a certificate named for a rank admits that rank only, and tls_bind_ranks wants one") {
  for (const bool bind : {false, true}) {
    CAPTURE(bind);
    const int port = free_loopback_port();
    StderrCapture log;
    auto rank_with = [&](const std::string& cert) {
      json p = {{"rank", 1}, {"world_size", 2}, {"server", "127.0.0.1:" + std::to_string(port)}};
      p.update(tls_params("run", false));
      p["tls_cert"] = (certificates("run") / (cert + ".pem")).string();
      p["tls_key"] = (certificates("run") / (cert + ".key")).string();
      return test::plugins().create_as<Communicator>("communicator", "tcp",
                                                     Params(p, "rank 1 with " + cert));
    };
    std::shared_ptr<Communicator> rank0, rank1;
    std::thread hub([&] {
      json p = {{"rank", 0},
                {"world_size", 2},
                {"server", "127.0.0.1:" + std::to_string(port)},
                {"tls_bind_ranks", bind}};
      p.update(tls_params("run", true));
      rank0 = test::plugins().create_as<Communicator>("communicator", "tcp", Params(p, "rank 0"));
    });
    // Rank 2's certificate, offered as rank 1: refused, by name, whether or not the run binds.
    const std::string impostor = test::error_of([&] { rank_with("rank-2"); });
    CHECK_MESSAGE(impostor.find("refused this rank: its certificate (\"dtnn rank 2\") is rank 2's, "
                                "and it asked to join as rank 1") != std::string::npos,
                  impostor);
    // The run's shared certificate: a rank in a run that does not bind, refused in one that does.
    if (bind) {
      const std::string shared = test::error_of([&] { rank_with("client"); });
      CHECK_MESSAGE(shared.find("names no rank, and the run binds ranks to certificates") !=
                        std::string::npos,
                    shared);
    }
    rank1 = rank_with(bind ? "rank-1" : "client");
    hub.join();
    CHECK(log.text().find("is rank 2's, and it asked to join as rank 1: connection refused") !=
          std::string::npos);
    on_every_rank({rank0, rank1}, [](int, Communicator& c) {
      float x = 1;
      c.allreduce_sum(&x, 1, DType::float32, "x");
      CHECK(x == 2);
    });
  }
}

TEST_CASE("tcp: tls_bind_ranks without TLS is refused by name") {
  const std::string error = test::error_of([] {
    test::plugins().create_as<Communicator>("communicator", "tcp",
                                            Params(json{{"rank", 0},
                                                        {"world_size", 1},
                                                        {"server", "127.0.0.1:1"},
                                                        {"tls_bind_ranks", true}},
                                                   "exp.json: parallel.communicator"));
  });
  CHECK_MESSAGE(error.find("tls_bind_ranks") != std::string::npos, error);
  CHECK_MESSAGE(error.find("without TLS") != std::string::npos, error);
}

TEST_CASE("tcp: a hello that names a wrong rank or world is refused, with the reason sent back") {
  const int port = free_loopback_port();
  StderrCapture log;
  std::shared_ptr<Communicator> rank0;
  std::thread hub([&] { rank0 = open_rank(0, 2, port, false); });
  std::string why;
  const int wrong_world = hand_made_rank(port, 1, 3);
  CHECK(read_frame_type(wrong_world, &why) == 3);  // a refusal
  CHECK(why == "it expects 3 ranks, rank 0 2 (--world-size differs)");
  const int wrong_rank = hand_made_rank(port, 5, 2);
  CHECK(read_frame_type(wrong_rank, &why) == 3);
  CHECK(why == "rank 5 is not among 1..1");
  const int right = hand_made_rank(port, 1, 2);
  CHECK(read_frame_type(right) == 2);  // welcome
  hub.join();
  for (int fd : {wrong_world, wrong_rank, right}) ::close(fd);
  CHECK(log.text().find("rank 5 is not among 1..1: connection refused") != std::string::npos);
}

TEST_CASE("tcp: a malformed frame is an error naming the peer and what was due, never a crash") {
  struct Case {
    const char* what;
    std::function<void(int fd)> send;
    const char* error;
  };
  const float payload[4] = {1, 2, 3, 4};
  const std::vector<Case> cases = {
      {"a wrong length", [&](int fd) { send_all(fd, header(4, 1, 12).data(), 24); },
       "sent a data frame of 12 bytes where 16 were due"},
      {"an oversized length", [&](int fd) { send_all(fd, header(4, 1, 1ull << 40).data(), 24); },
       "sent a data frame of 1099511627776 bytes where 16 were due"},
      {"another collective", [&](int fd) { send_all(fd, header(4, 9, 16).data(), 24); },
       "sent a frame of collective #9 during collective #1"},
      {"a wrong type", [&](int fd) { send_all(fd, header(2, 1, 0).data(), 24); },
       "sent a welcome frame where a data frame was due"},
      {"an unknown type", [&](int fd) { send_all(fd, header(77, 1, 0).data(), 24); },
       "sent a frame of unknown type 77"},
      {"no header", [&](int fd) { send_all(fd, header(4, 1, 16, "HTTP").data(), 24); },
       "not a dtnn frame"},
      {"a truncated frame",
       [&](int fd) {
         send_all(fd, header(4, 1, 16).data(), 24);
         send_all(fd, payload, 6);
         ::shutdown(fd, SHUT_WR);
       },
       "closed the connection while receiving"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const int port = free_loopback_port();
    std::shared_ptr<Communicator> rank0;
    std::thread hub([&] { rank0 = open_rank(0, 2, port, false); });
    const int fake = hand_made_rank(port, 1, 2);
    REQUIRE(read_frame_type(fake) == 2);
    hub.join();
    c.send(fake);
    float x[4] = {1, 1, 1, 1};
    const std::string error =
        test::error_of([&] { rank0->allreduce_sum(x, 4, DType::float32, "gradients, bucket 0"); });
    CHECK(error.find("tcp: rank 1 (127.0.0.1:") != std::string::npos);
    CHECK(error.find(c.error) != std::string::npos);
    CHECK(error.find("(collective #1 'gradients, bucket 0')") != std::string::npos);
    CHECK(x[0] == 1);  // nothing was summed
    // Every later collective fails at once with the first error.
    CHECK(test::error_of([&] { rank0->barrier("later"); }) == error);
    ::close(fake);
  }
}

TEST_CASE("tcp: a rank that leaves is noticed at once, a silent one within parallel.timeout_s") {
  test::check_a_rank_that_ends([] { return world(2, free_loopback_port(), false); },
                               "tcp: rank 1 (127.0.0.1:", "closed the connection");
}

namespace {

// Rank 0 on rank0_port and rank 1 dialling the relay's port (for TLS, a name rank 0's
// certificate holds).
std::vector<std::shared_ptr<Communicator>> relayed_world(int rank0_port, int relay_port, bool tls) {
  std::vector<std::shared_ptr<Communicator>> ranks(2);
  std::thread hub([&] { ranks[0] = open_rank(0, 2, rank0_port, tls); });
  ranks[1] = open_rank(1, 2, relay_port, tls);
  hub.join();
  return ranks;
}

}  // namespace

TEST_CASE(
    "tcp: over TLS no known value crosses the wire readable, and altered or replayed bytes "
    "are refused (in clear, they are read and applied: the control)") {
  std::vector<float> secret(256);
  for (std::size_t i = 0; i < secret.size(); ++i) secret[i] = 1234.5678f + static_cast<float>(i);
  const std::string needle(reinterpret_cast<const char*>(secret.data()) + 64, 64);
  for (const bool tls : {false, true}) {
    CAPTURE(tls);
    for (const Relay::Mode mode : {Relay::Mode::pass, Relay::Mode::flip, Relay::Mode::replay}) {
      CAPTURE(static_cast<int>(mode));
      const int rank0_port = free_loopback_port(), relay_port = free_loopback_port();
      Relay relay(relay_port, rank0_port);
      auto ranks = relayed_world(rank0_port, relay_port, tls);
      relay.arm(mode);
      // Two sums of the secret (a replayed record may wait unread until the next one).
      std::vector<float> sum0(secret.size(), 0.0f), first0, sum1;
      std::string errors[2];
      {
        std::thread t0([&] {
          errors[0] = test::error_of([&] {
            for (int i = 0; i < 2; ++i) {
              std::fill(sum0.begin(), sum0.end(), 0.0f);
              ranks[0]->allreduce_sum(sum0.data(), sum0.size(), DType::float32, "secret");
              if (i == 0) first0 = sum0;
            }
          });
          if (!errors[0].empty()) ranks[0].reset();  // rank 0 ends: rank 1 is not left waiting
        });
        errors[1] = test::error_of([&] {
          for (int i = 0; i < 2; ++i) {
            sum1 = secret;
            ranks[1]->allreduce_sum(sum1.data(), sum1.size(), DType::float32, "secret");
          }
        });
        t0.join();
      }
      const bool seen = relay.sent().find(needle) != std::string::npos;
      if (!tls) {
        CHECK(seen);  // in clear the relay reads the values...
        if (mode == Relay::Mode::flip) CHECK(first0 != secret);  // ...and an altered one is summed
        if (mode == Relay::Mode::pass) CHECK(first0 == secret);
        // A frame replayed whole is refused by its collective's number, even in clear.
        if (mode == Relay::Mode::replay)
          CHECK(errors[0].find("sent a frame of collective #1 during collective #2") !=
                std::string::npos);
        else
          CHECK(errors[0] == "");
        continue;
      }
      CHECK_FALSE(seen);
      if (mode == Relay::Mode::pass) {
        CHECK(errors[0] == "");
        CHECK(sum0 == secret);
      } else {
        CHECK(errors[0].find("tcp: rank 1 (127.0.0.1:") != std::string::npos);
        CHECK(errors[0].find("TLS failed while receiving") != std::string::npos);
        // Nothing altered or replayed was summed: rank 0 holds the zeros it started the failed
        // sum from.
        CHECK(sum0 == std::vector<float>(secret.size(), 0.0f));
        CHECK(errors[1] != "");  // rank 1 hears that rank 0 is gone
      }
    }
  }
}

TEST_CASE(
    "tcp: when ranks may leave, rank 0 goes on without a rank that closes its connection or "
    "stays silent, which adds nothing to sums and zeros to allgathers") {
  for (const bool silent : {false, true}) {
    CAPTURE(silent);
    test::check_a_rank_leaving(
        world(3, free_loopback_port(), false), silent,
        {"tcp: rank 2 (127.0.0.1:",
         silent ? "no answer within 1 s while receiving (collective #3): it has left; the run "
                  "goes on with 2 of 3 ranks"
                : "closed the connection while receiving (collective #3): it has left; the run "
                  "goes on with 2 of 3 ranks"},
        "tcp: rank 2, the root of broadcast #5, has left (collective #5 'from 2')");
  }
}
