// The grpc communicator on loopback: every collective against its definition, plain and over TLS;
// refused hellos and a stranger's certificate, a rank that leaves and one that goes silent, with
// and without ranks allowed to leave.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/testing/loopback.hpp"
#include "test_support.hpp"
#include "wire_testing.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

using test::certificates;
using test::on_every_rank;
using test::StderrCapture;
using testing::free_loopback_port;

// Built where Debian's libgrpc++-dev is (plugins/communicators/grpc/CMakeLists.txt).
bool have_grpc() { return test::plugins().find("communicator", "grpc") != nullptr; }

using test::tls_params;

std::shared_ptr<Communicator> open_rank(int rank, int size, int port, bool tls,
                                        double connect_s = 20) {
  return test::open_star_rank("grpc", rank, size, port, tls, connect_s);
}

std::vector<std::shared_ptr<Communicator>> world(int n, int port, bool tls) {
  return test::star_world("grpc", n, port, tls);
}

// Closes the ranks' communicators, rank 0's last, as a run's processes end (rank 0 gives the
// others a few seconds to end their streams first).
void close(std::vector<std::shared_ptr<Communicator>>& ranks) {
  while (!ranks.empty()) ranks.pop_back();
}

}  // namespace

TEST_CASE("grpc: every collective on 3 ranks as defined, plain and over TLS") {
  if (!have_grpc()) return;
  for (const bool tls : {false, true}) {
    CAPTURE(tls);
    auto ranks = world(3, free_loopback_port(), tls);
    CHECK(ranks[1]->size() == 3);
    CHECK(ranks[2]->rank() == 2);
    CHECK(ranks[0]->describe().find(tls ? "TLS (mutual)" : "no TLS") != std::string::npos);
    on_every_rank(ranks, test::check_three_rank_collectives);
    close(ranks);
  }
}

TEST_CASE("grpc: refused ranks are told why and named, and the real ranks meet anyway") {
  if (!have_grpc()) return;
  const int port = free_loopback_port();
  StderrCapture log;
  std::shared_ptr<Communicator> rank0, rank1;
  std::string hub_error;  // each rank's error is checked after the joins, never thrown in a thread
  std::thread hub(
      [&] { hub_error = test::error_of([&] { rank0 = open_rank(0, 2, port, true); }); });
  // A rank of another world size: refused, with the reason.
  json p = {{"rank", 1}, {"world_size", 3}, {"server", "127.0.0.1:" + std::to_string(port)}};
  p.update(tls_params("run", false));
  const std::string other_world = test::error_of([&] {
    test::plugins().create_as<Communicator>("communicator", "grpc", Params(p, "other world"));
  });
  CHECK_MESSAGE(
      other_world.find("refused this rank: it expects 3 ranks, rank 0 2") != std::string::npos,
      other_world);
  // A rank whose certificate another authority signed: refused, told why, and named.
  p = {{"rank", 1},
       {"world_size", 2},
       {"server", "127.0.0.1:" + std::to_string(port)},
       {"connect_timeout_s", 2}};
  p.update(tls_params("other", false));
  const std::string stranger = test::error_of([&] {
    test::plugins().create_as<Communicator>("communicator", "grpc", Params(p, "stranger"));
  });
  CHECK_MESSAGE(stranger.find("refused this rank: its certificate does not verify against the "
                              "run's authority") != std::string::npos,
                stranger);
  const std::string rank1_error = test::error_of([&] { rank1 = open_rank(1, 2, port, true); });
  hub.join();
  REQUIRE(hub_error == "");
  REQUIRE(rank1_error == "");
  const std::string text = log.text();
  CHECK(text.find("it expects 3 ranks, rank 0 2 (--world-size differs): stream refused; still "
                  "waiting for 1 rank(s)") != std::string::npos);
  CHECK(text.find("grpc: ipv4:127.0.0.1:") != std::string::npos);  // the refused ones, by address
  CHECK(text.find("its certificate does not verify against the run's authority (unable to get "
                  "local issuer certificate): stream refused") != std::string::npos);
  std::vector<std::shared_ptr<Communicator>> ranks{rank0, rank1};
  rank0.reset(), rank1.reset();
  on_every_rank(ranks, [](int, Communicator& c) {
    float x = 1;
    c.allreduce_sum(&x, 1, DType::float32, "x");
    CHECK(x == 2);
  });
  close(ranks);
}

TEST_CASE("grpc: a certificate named for a rank admits that rank only") {
  if (!have_grpc()) return;
  const int port = free_loopback_port();
  StderrCapture log;
  std::shared_ptr<Communicator> rank0;
  std::string hub_error;
  std::thread hub(
      [&] { hub_error = test::error_of([&] { rank0 = open_rank(0, 3, port, true); }); });
  auto as_rank = [&](int rank, int cert_of) {
    json p = {{"rank", rank}, {"world_size", 3}, {"server", "127.0.0.1:" + std::to_string(port)}};
    p.update(tls_params("run", false));
    const std::string cert = "rank-" + std::to_string(cert_of);
    p["tls_cert"] = (certificates("run") / (cert + ".pem")).string();
    p["tls_key"] = (certificates("run") / (cert + ".key")).string();
    return test::plugins().create_as<Communicator>("communicator", "grpc", Params(p, "rank"));
  };
  const std::string wrong = test::error_of([&] { as_rank(1, 2); });
  CHECK_MESSAGE(wrong.find("refused this rank: its certificate (\"dtnn rank 2\") is rank 2's, and "
                           "it asked to join as rank 1") != std::string::npos,
                wrong);
  std::shared_ptr<Communicator> r1, r2;
  std::string r1_error;
  std::thread t1([&] { r1_error = test::error_of([&] { r1 = as_rank(1, 1); }); });
  const std::string r2_error = test::error_of([&] { r2 = as_rank(2, 2); });
  t1.join();
  hub.join();
  REQUIRE(hub_error == "");
  REQUIRE(r1_error == "");
  REQUIRE(r2_error == "");
  std::vector<std::shared_ptr<Communicator>> ranks{rank0, r1, r2};
  rank0.reset(), r1.reset(), r2.reset();
  on_every_rank(ranks, test::check_three_rank_collectives);
  close(ranks);
}

TEST_CASE("grpc: a rank that leaves is noticed at once, a silent one within parallel.timeout_s") {
  if (!have_grpc()) return;
  test::check_a_rank_that_ends([] { return world(2, free_loopback_port(), false); },
                               "grpc: rank 1 (ipv4:127.0.0.1:", "closed the stream");
}

TEST_CASE(
    "grpc: when ranks may leave, rank 0 goes on without a rank that closes its stream or stays "
    "silent, which adds nothing to sums and zeros to allgathers") {
  if (!have_grpc()) return;
  for (const bool silent : {false, true}) {
    CAPTURE(silent);
    test::check_a_rank_leaving(
        world(3, free_loopback_port(), false), silent,
        {"grpc: rank 2 (ipv4:127.0.0.1:",
         silent ? "no answer within 1 s while receiving (collective #3): it has left; the run "
                  "goes on with 2 of 3 ranks"
                : "closed the stream while receiving (collective #3): it has left; the run "
                  "goes on with 2 of 3 ranks"},
        "grpc: rank 2, the root of broadcast #5, has left (collective #5 'from 2')");
  }
}
