// The mqtt communicator through a real Mosquitto broker on loopback (scripts/mqtt-broker.sh): every
// collective against its definition, plain and over TLS, in chunks; strangers and a second process
// as one rank; malformed messages; a rank that leaves, one that goes silent, the broker lost; and
// what crosses the wire, read and tampered with by a relay between a rank and the broker. Skipped
// where mosquitto is not installed. (Whole runs over mqtt: tests/transport_runs.py.)
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/testing/loopback.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "test_support.hpp"
#include "wire_testing.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

using test::Broker;
using test::certificates;
using test::have_mosquitto;
using test::on_every_rank;
using test::Relay;
using testing::free_loopback_port;

json rank_params(int rank, int size, int port, bool tls, const std::string& authority = "run") {
  json p = {{"rank", rank},
            {"world_size", size},
            {"broker", "127.0.0.1:" + std::to_string(port)},
            {"topic", "dtnn-test"},
            {"connect_timeout_s", 20},
            {"chunk_bytes", 1024}};
  if (tls) {
    const auto d = certificates(authority);
    p.update({{"tls_ca", (certificates("run") / "ca.pem").string()},
              {"tls_cert", (d / "client.pem").string()},
              {"tls_key", (d / "client.key").string()}});
  }
  return p;
}

// A rank whose every collective ends within 20 s, so that no test can hang on a message lost.
std::shared_ptr<Communicator> open_rank(const json& p) {
  auto c = test::plugins().create_as<Communicator>("communicator", "mqtt",
                                                   Params(p, "test: parallel.communicator"));
  c->set_timeout(20);
  return c;
}

// n ranks, each opened on its own thread.
std::vector<std::shared_ptr<Communicator>> world(int n, int port, bool tls) {
  std::vector<std::shared_ptr<Communicator>> ranks(static_cast<std::size_t>(n));
  std::vector<std::string> errors(ranks.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      errors[static_cast<std::size_t>(r)] = test::error_of(
          [&] { ranks[static_cast<std::size_t>(r)] = open_rank(rank_params(r, n, port, tls)); });
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) REQUIRE(e == "");
  return ranks;
}

// An MQTT 3.1.1 client written by hand on a socket (CONNECT, then PUBLISH at QoS 0): a rogue that
// publishes whatever bytes it likes on a run's topics.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(test::dial(port)) {
    std::string body = std::string("\0\4MQTT\4\2\0\x3c", 10) + field("rogue");
    send_packet(0x10, body);
    unsigned char connack[4];
    REQUIRE(::recv(fd_, connack, 4, MSG_WAITALL) == 4);
    REQUIRE(connack[0] == 0x20);
    REQUIRE(connack[3] == 0);
  }
  ~RawClient() { ::close(fd_); }
  void publish(const std::string& topic, const std::string& payload) {
    send_packet(0x30, field(topic) + payload);
  }

 private:
  static std::string field(const std::string& s) {
    return std::string(1, static_cast<char>(s.size() >> 8)) +
           std::string(1, static_cast<char>(s.size() & 0xff)) + s;
  }
  void send_packet(unsigned char type, const std::string& body) {
    std::string packet(1, static_cast<char>(type));
    for (std::size_t n = body.size();;) {  // the remaining length, 7 bits a byte
      const unsigned char digit = static_cast<unsigned char>(n % 128);
      n /= 128;
      packet += static_cast<char>(digit | (n > 0 ? 0x80 : 0));
      if (n == 0) break;
    }
    packet += body;
    REQUIRE(::send(fd_, packet.data(), packet.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(packet.size()));
  }
  int fd_;
};

// A message header as the protocol writes it (message.hpp), built here byte by byte.
std::string header(unsigned type, std::uint32_t from, std::uint64_t seq, std::uint64_t total,
                   const char* magic = "DTMQ", unsigned version = 1) {
  std::string h(56, '\0');
  std::memcpy(h.data(), magic, 4);
  h[4] = static_cast<char>(version);
  h[5] = static_cast<char>(type);
  auto put = [&](std::size_t at, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) h[at + i] = static_cast<char>(v >> (8 * i));
  };
  put(8, from, 4);
  put(12, 0, 4);
  put(32, seq, 8);
  put(40, total, 8);
  return h;
}

}  // namespace

TEST_CASE("mqtt: every collective on 3 ranks through a Mosquitto broker, plain and over TLS") {
  if (!have_mosquitto()) {
    MESSAGE("skipped: no /usr/sbin/mosquitto (Debian: apt-get install mosquitto)");
    return;
  }
  for (const bool tls : {false, true}) {
    CAPTURE(tls);
    Broker broker(tls);
    const auto ranks = world(3, broker.port(), tls);
    CHECK(ranks[0]->describe().find(tls ? "TLS 1.3" : "no TLS") != std::string::npos);
    on_every_rank(ranks, [](int rank, Communicator& c) {
      test::check_three_rank_collectives(rank, c);
      std::vector<double> w(300, rank == 1 ? 7.25 : -1.0);  // a broadcast in chunks
      c.broadcast(w.data(), w.size(), DType::float64, 1, "weights");
      CHECK(w == std::vector<double>(300, 7.25));
      for (const testing::Check& check : testing::check_communicator(c)) {
        CAPTURE(check.what);
        CHECK(check.passed);
      }
    });
  }
}

TEST_CASE(
    "mqtt: strangers are refused by the broker and named in its log, and the ranks meet anyway") {
  if (!have_mosquitto()) return;
  Broker broker(true);
  // A client whose certificate another authority signed.
  const std::string stranger =
      test::error_of([&] { open_rank(rank_params(1, 2, broker.port(), true, "other")); });
  CHECK_MESSAGE(stranger.find("closed the connection before accepting rank 1") != std::string::npos,
                stranger);
  // A client without TLS at all.
  const std::string plain = test::error_of([&] {
    json p = rank_params(1, 2, broker.port(), false);
    p["connect_timeout_s"] = 3;
    open_rank(p);
  });
  CHECK_MESSAGE(plain != "", plain);
  const auto ranks = world(2, broker.port(), true);
  on_every_rank(ranks, [](int, Communicator& c) {
    float x = 1;
    c.allreduce_sum(&x, 1, DType::float32, "x");
    CHECK(x == 2);
  });
  const std::string log = broker.log();
  // Mosquitto logs the failed handshake as "OpenSSL Error[0]: ..." or as "Client connection from
  // ... failed: ...", by timing; the reasons are the same.
  CHECK_MESSAGE(log.find("certificate verify failed") != std::string::npos, log);  // the stranger
  CHECK_MESSAGE(log.find("wrong version number") != std::string::npos, log);  // the client in clear
  CHECK(log.find("Client connection from 127.0.0.1 failed") != std::string::npos);
}

TEST_CASE("mqtt: another world size, or a second process as one rank, is refused with the reason") {
  if (!have_mosquitto()) return;
  Broker broker(false);
  std::shared_ptr<Communicator> rank0, rank2;
  std::thread hub([&] {
    CHECK(test::error_of([&] { rank0 = open_rank(rank_params(0, 3, broker.port(), false)); }) ==
          "");
  });
  const std::string wrong_world =
      test::error_of([&] { open_rank(rank_params(1, 2, broker.port(), false)); });
  CHECK(wrong_world == "mqtt: rank 0 runs 3 ranks, this rank expects 2 (--world-size differs)");
  std::shared_ptr<Communicator> first;
  std::string first_error;
  std::thread one([&] {
    first_error =
        test::error_of([&] { first = open_rank(rank_params(1, 3, broker.port(), false)); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string second =
      test::error_of([&] { open_rank(rank_params(1, 3, broker.port(), false)); });
  CHECK(second == "mqtt: rank 0 refused this rank: rank 1 is taken by another process");
  rank2 = open_rank(rank_params(2, 3, broker.port(), false));
  hub.join();
  one.join();
  REQUIRE(first_error == "");
  on_every_rank({rank0, first, rank2}, [](int, Communicator& c) { c.barrier("met"); });
}

TEST_CASE("mqtt: a malformed message is an error naming the rank and what was due, never a crash") {
  if (!have_mosquitto()) return;
  struct Case {
    const char* what;
    std::string payload;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"not a dtnn message", "GET / HTTP/1.1",
       "sent a message of 14 bytes that is not a dtnn message"},
      {"another version", header(5, 1, 1, 16, "DTMQ", 9), "speaks protocol version 9"},
      {"an unknown type", header(77, 1, 1, 16), "sent a message of unknown type 77"},
      {"reserved bytes set",
       [] {
         std::string h = header(5, 1, 1, 0);
         h[7] = 1;
         return h;
       }(),
       "sent a message whose reserved bytes 6-7 are not zero"},
      {"bytes past the end", header(5, 1, 1, 4) + std::string(8, 'x'),
       "sent 8 bytes at offset 0 of a 4-byte transfer"},
      {"another run", header(5, 1, 1, 16) + std::string(16, 'x'),
       "sent a message of another run (its session differs)"},
      {"another type", header(2, 1, 1, 12) + std::string(12, 'x'),
       "sent a hello message where a data message was due"},
  };
  Broker broker(false);
  for (const Case& c : cases) {
    CAPTURE(c.what);
    auto ranks = world(2, broker.port(), false);
    RawClient rogue(broker.port());
    rogue.publish("dtnn-test/up/1", c.payload);
    float x[4] = {1, 1, 1, 1};
    const std::string error =
        test::error_of([&] { ranks[0]->allreduce_sum(x, 4, DType::float32, "gradients"); });
    CHECK_MESSAGE(error.find("mqtt: rank 1 (topic dtnn-test/up/1): ") != std::string::npos, error);
    CHECK_MESSAGE(error.find(c.error) != std::string::npos, error);
    CHECK(error.find("(collective #1 'gradients')") != std::string::npos);
    CHECK(x[0] == 1);  // nothing was summed
    CHECK(test::error_of([&] { ranks[0]->barrier("later"); }) == error);
  }
}

TEST_CASE(
    "mqtt: a rank that leaves is noticed at once, a silent one within the timeout, and so is "
    "the broker lost") {
  if (!have_mosquitto()) return;
  {
    Broker broker(false);
    auto ranks = world(2, broker.port(), false);
    ranks[1].reset();
    const auto start = std::chrono::steady_clock::now();
    float x = 1;
    const std::string error =
        test::error_of([&] { ranks[0]->allreduce_sum(&x, 1, DType::float32, "loss"); });
    CHECK(error ==
          "mqtt: rank 1 (topic dtnn-test/up/1): left the run (its connection to the broker "
          "closed) (collective #1 'loss')");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
  {
    Broker broker(false);
    auto ranks = world(2, broker.port(), false);
    ranks[0]->set_timeout(0.3);
    float x = 1;
    CHECK(test::error_of([&] { ranks[0]->allreduce_sum(&x, 1, DType::float32, "loss"); }) ==
          "mqtt: rank 1 (topic dtnn-test/up/1): no answer within 0.3 s while receiving "
          "(collective #1 'loss')");
    broker.stop();
    const std::string lost =
        test::error_of([&] { ranks[1]->allreduce_sum(&x, 1, DType::float32, "loss"); });
    CHECK_MESSAGE(lost.find("lost the broker at 127.0.0.1:") != std::string::npos, lost);
  }
}

TEST_CASE(
    "mqtt: over TLS no known value crosses the wire readable, and altered bytes are "
    "refused (in clear, they are read: the control)") {
  if (!have_mosquitto()) return;
  std::vector<float> secret(256);
  for (std::size_t i = 0; i < secret.size(); ++i) secret[i] = 1234.5678f + static_cast<float>(i);
  const std::string needle(reinterpret_cast<const char*>(secret.data()) + 64, 64);
  for (const bool tls : {false, true}) {
    for (const Relay::Mode mode : {Relay::Mode::pass, Relay::Mode::flip, Relay::Mode::replay}) {
      CAPTURE(tls);
      CAPTURE(static_cast<int>(mode));
      Broker broker(tls);
      const int relay_port = free_loopback_port();
      Relay relay(relay_port, broker.port());
      std::vector<std::shared_ptr<Communicator>> ranks(2);
      std::thread t0([&] { ranks[0] = open_rank(rank_params(0, 2, broker.port(), tls)); });
      ranks[1] = open_rank(rank_params(1, 2, relay_port, tls));
      t0.join();
      ranks[0]->set_timeout(5);
      relay.arm(mode);
      std::vector<float> sum0(secret.size(), 0.0f), sum1 = secret;
      std::string errors[2];
      std::thread r0([&] {
        errors[0] = test::error_of(
            [&] { ranks[0]->allreduce_sum(sum0.data(), sum0.size(), DType::float32, "secret"); });
        if (!errors[0].empty()) ranks[0].reset();
      });
      errors[1] = test::error_of(
          [&] { ranks[1]->allreduce_sum(sum1.data(), sum1.size(), DType::float32, "secret"); });
      r0.join();
      const bool seen = relay.sent().find(needle) != std::string::npos;
      if (!tls) {
        // In clear the relay reads the values. (An altered byte may land in MQTT's own framing, and
        // the broker drop the connection before the values are sent.)
        if (mode == Relay::Mode::pass) CHECK(seen);
        if (mode == Relay::Mode::pass) CHECK(sum0 == secret);
        continue;
      }
      CHECK_FALSE(seen);
      if (mode == Relay::Mode::pass) {
        CHECK(errors[0] == "");
        CHECK(sum0 == secret);
      } else if (mode == Relay::Mode::flip) {
        // The broker drops rank 1's connection at the altered record; its last will tells rank 0.
        CHECK_MESSAGE(errors[0].find("mqtt: rank 1 (topic dtnn-test/up/1): left the run") !=
                          std::string::npos,
                      errors[0]);
        CHECK(sum0 == std::vector<float>(secret.size(), 0.0f));  // nothing altered was summed
        CHECK(errors[1] != "");
      } else {
        // The record replayed is refused and rank 1 dropped: its values count once at most.
        CHECK((sum0 == secret || sum0 == std::vector<float>(secret.size(), 0.0f)));
        if (ranks[0]) {
          float x = 1;
          CHECK(test::error_of([&] {
                  ranks[0]->allreduce_sum(&x, 1, DType::float32, "next");
                }).find("mqtt: rank 1 (topic dtnn-test/up/1): left the run") != std::string::npos);
        }
      }
    }
  }
}

TEST_CASE(
    "mqtt: when ranks may leave, rank 0 goes on without a rank that leaves or stays silent, which "
    "adds nothing to sums and zeros to allgathers") {
  if (!have_mosquitto()) return;
  for (const bool silent : {false, true}) {
    CAPTURE(silent);
    Broker broker(false);
    test::check_a_rank_leaving(
        world(3, broker.port(), false), silent,
        {silent ? "mqtt: rank 2 (topic dtnn-test/up/2): no answer within 1 s while receiving "
                  "(collective #3): it has left; the run goes on with 2 of 3"
                : "mqtt: rank 2 (topic dtnn-test/up/2): left the run (its connection to the "
                  "broker closed) (collective #3): it has left; the run goes on with 2 of 3"},
        "mqtt: rank 2, the root of broadcast #5, has left (collective #5 'from 2')");
  }
}
