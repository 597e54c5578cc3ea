// Helpers for the tests of communicators that talk over sockets (tcp, mqtt), on loopback: dialling
// a port, the test certificates, running a function on every rank at once, capturing this process's
// log, a relay that reads and alters what a rank sends, and a Mosquitto broker. Test code only
// (doctest).
#pragma once
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dtnn/communicator.hpp"
#include "dtnn/testing/loopback.hpp"
#include "test_support.hpp"

namespace dtnn::test {

// A connected socket to 127.0.0.1:port, retried while nothing listens there yet (5 s at most).
inline int dial(int port) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("nothing listens on port " << port);
  return -1;
}

// The test certificates (scripts/make-test-ca.sh --ranks 4), made once: "run" signed by the run's
// authority, "other" by another one; each with server, client and rank-1 .. rank-3 certificates.
inline std::filesystem::path certificates(const std::string& which) {
  static const std::filesystem::path dir = [] {
    const auto d = temp_dir("wire-tls");
    for (const char* authority : {"run", "other"}) {
      const std::string command = std::string("sh ") + DTNN_TEST_SOURCE_DIR +
                                  "/scripts/make-test-ca.sh --ranks 4 " + (d / authority).string() +
                                  " > /dev/null";
      REQUIRE(std::system(command.c_str()) == 0);
    }
    return d;
  }();
  return dir / which;
}

// The TLS parameters of a rank of a star transport (tcp, grpc): the run's authority, and a
// certificate and key that `authority` signed ("run" or "other"), rank 0's or another rank's.
inline nlohmann::json tls_params(const std::string& authority, bool rank0) {
  const auto d = certificates(authority);
  const std::string who = rank0 ? "server" : "client";
  return {{"tls_ca", (certificates("run") / "ca.pem").string()},
          {"tls_cert", (d / (who + ".pem")).string()},
          {"tls_key", (d / (who + ".key")).string()}};
}

// Rank `rank` of `size` of a star transport (tcp, grpc) whose rank 0 is at 127.0.0.1:port.
inline std::shared_ptr<Communicator> open_star_rank(const std::string& transport, int rank,
                                                    int size, int port, bool tls,
                                                    double connect_s = 20) {
  nlohmann::json p = {{"rank", rank},
                      {"world_size", size},
                      {"server", "127.0.0.1:" + std::to_string(port)},
                      {"connect_timeout_s", connect_s}};
  if (tls) p.update(tls_params("run", rank == 0));
  return plugins().create_as<Communicator>("communicator", transport,
                                           dtnn::Params(p, "test: parallel.communicator"));
}

// n ranks of a star transport, each opened on its own thread (rank 0 waits for the others).
inline std::vector<std::shared_ptr<Communicator>> star_world(const std::string& transport, int n,
                                                             int port, bool tls) {
  std::vector<std::shared_ptr<Communicator>> ranks(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      ranks[static_cast<std::size_t>(r)] = open_star_rank(transport, r, n, port, tls);
    });
  for (auto& t : threads) t.join();
  for (const auto& c : ranks) REQUIRE(c);
  return ranks;
}

// f(rank, communicator) on every rank at once.
inline void on_every_rank(const std::vector<std::shared_ptr<Communicator>>& ranks,
                          const std::function<void(int, Communicator&)>& f) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    threads.emplace_back(
        [&, r] { errors[r] = error_of([&] { f(static_cast<int>(r), *ranks[r]); }); });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) CHECK(e == "");
}

// The collectives of a star-shaped transport (tcp, mqtt) on 3 ranks, from rank `rank`: sums formed
// on rank 0 in rank order (every rank gets those exact bits), over 4 KB (several of mqtt's test
// chunks); two non-blocking sums in flight, then a blocking collective; a broadcast from rank 1; an
// allgather; an empty sum.
inline void check_three_rank_collectives(int rank, Communicator& c) {
  // Sums, formed on rank 0 in rank order: every rank gets those exact bits.
  std::vector<float> x(1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(rank + 1) + i;
  c.allreduce_sum(x.data(), x.size(), DType::float32, "sum");
  for (std::size_t i = 0; i < x.size(); i += 97) {
    const float want = ((0.1f + i) + (0.2f + i)) + (0.3f + i);
    REQUIRE(x[i] == want);
  }
  std::vector<double> d(3, rank + 0.5);
  c.allreduce_sum(d.data(), d.size(), DType::float64, "sum of doubles");
  CHECK(d == std::vector<double>(3, 4.5));
  // Two non-blocking sums in flight, then a blocking collective after them.
  std::vector<float> a(5000, 1.0f), b(7, static_cast<float>(rank));
  auto ra = c.iallreduce_sum(a.data(), a.size(), DType::float32, "bucket 0");
  auto rb = c.iallreduce_sum(b.data(), b.size(), DType::float32, "bucket 1");
  c.barrier("after the buckets");
  CHECK(ra->test());
  ra->wait();
  rb->wait();
  CHECK(a[4999] == 3.0f);
  CHECK(b[0] == 3.0f);
  // A broadcast from a rank other than 0, and an allgather.
  std::vector<double> w(4, rank == 1 ? 7.25 : -1.0);
  c.broadcast(w.data(), w.size(), DType::float64, 1, "weights");
  CHECK(w == std::vector<double>(4, 7.25));
  std::vector<float> mine(2, static_cast<float>(10 * rank)), all(6, -1.0f);
  c.allgather(mine.data(), all.data(), 2, DType::float32, "gather");
  CHECK(all == std::vector<float>{0, 0, 10, 10, 20, 20});
  c.allreduce_sum(nullptr, 0, DType::float32, "nothing");
}

// What this process writes to stderr while it lives.
class StderrCapture {
 public:
  StderrCapture() : file_(temp_dir("wire-stderr") / "stderr.txt") {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    std::ifstream in(file_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::filesystem::path file_;
  int saved_ = -1;
};

// A relay between a client (a rank) and its server (rank 0, a broker) that keeps what the client
// sends, and once armed alters it: flips a byte of the next bytes it relays, or relays them twice.
class Relay {
 public:
  enum class Mode { pass, flip, replay };

  Relay(int listen_port, int server_port) : server_port_(server_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(listen_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    thread_ = std::thread([this] { relay(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  void arm(Mode mode) { mode_ = mode; }
  std::string sent() {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  void relay() {
    pollfd l{listener_, POLLIN, 0};
    while (!stop_ && ::poll(&l, 1, 50) == 0) {
    }
    if (stop_) return;
    const int from = ::accept(listener_, nullptr, nullptr), to = dial(server_port_);
    char buffer[1 << 16];
    while (!stop_) {
      pollfd p[2] = {{from, POLLIN, 0}, {to, POLLIN, 0}};
      if (::poll(p, 2, 50) <= 0) continue;
      if (p[1].revents) {  // server to client: as it comes
        const ssize_t n = ::recv(to, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        ::send(from, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL);
      }
      if (p[0].revents) {
        const ssize_t n = ::recv(from, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        {
          std::lock_guard lock(mutex_);
          sent_.append(buffer, static_cast<std::size_t>(n));
        }
        const Mode mode = mode_.exchange(Mode::pass);
        if (mode == Mode::flip) buffer[n / 2] ^= 0x20;
        ::send(to, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL);
        if (mode == Mode::replay) ::send(to, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL);
      }
    }
    ::close(from);
    ::close(to);
  }

  int listener_ = -1, server_port_;
  std::atomic<bool> stop_{false};
  std::atomic<Mode> mode_{Mode::pass};
  std::mutex mutex_;
  std::string sent_;
  std::thread thread_;
};

inline bool have_mosquitto() { return std::filesystem::exists("/usr/sbin/mosquitto"); }

// A Mosquitto broker of the test's own on a free port (scripts/mqtt-broker.sh): plain, or TLS with
// the run's test authority. It ends with the test process, however that ends.
class Broker {
 public:
  explicit Broker(bool tls) : port_(testing::free_loopback_port()) {
    static int count = 0;
    dir_ = temp_dir("mqtt-broker") / std::to_string(count++);
    std::filesystem::remove_all(dir_);
    const std::string script = std::string(DTNN_TEST_SOURCE_DIR) + "/scripts/mqtt-broker.sh";
    const std::string certs = tls ? certificates("run").string() : "";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the broker ends with the test, however it ends
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execl("/bin/sh", "sh", script.c_str(), dir_.c_str(), std::to_string(port_).c_str(),
              certs.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(dial(port_));  // listening
  }
  ~Broker() { stop(); }
  // Ends the broker at once, as a crash would (no last wills published).
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int port() const { return port_; }
  std::string log() const {
    std::ifstream in(dir_ / "mosquitto.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  int port_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

// A rank leaving a star transport's run whose ranks may leave, on 3 ranks: after a sum of all
// three, rank 2 goes (silent: stays open and quiet under a 2 s timeout, so rank 0 lets it go after
// 1 s; else it closes); ranks 0 and 1 then sum and allgather without it (it adds nothing, zeros
// in its slot), rank 0's warning holds each of `said`, and a broadcast from rank 2 fails with
// `broadcast_error`.
// Two ranks of a star transport from make_world (a fresh pair each call): when rank 1 ends, rank
// 0's next collective fails at once naming it (`peer`, e.g. "tcp: rank 1 (127.0.0.1:") and saying
// `closed` ("closed the connection"); when rank 1 stays silent, after parallel.timeout_s.
inline void check_a_rank_that_ends(
    const std::function<std::vector<std::shared_ptr<Communicator>>()>& make_world,
    const std::string& peer, const std::string& closed) {
  {
    auto ranks = make_world();
    ranks[1].reset();  // rank 1 ends
    const auto start = std::chrono::steady_clock::now();
    float x = 1;
    const std::string error =
        error_of([&] { ranks[0]->allreduce_sum(&x, 1, dtnn::DType::float32, "loss"); });
    CHECK(error.find(peer) != std::string::npos);
    CHECK(error.find(closed) != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
  {
    auto ranks = make_world();
    ranks[0]->set_timeout(0.3);
    float x = 1;
    const std::string error =
        error_of([&] { ranks[0]->allreduce_sum(&x, 1, dtnn::DType::float32, "loss"); });
    CHECK(error.find(peer) != std::string::npos);
    CHECK(error.find("no answer within 0.3 s while receiving (collective #1 'loss')") !=
          std::string::npos);
  }
}

inline void check_a_rank_leaving(std::vector<std::shared_ptr<Communicator>> ranks, bool silent,
                                 const std::vector<std::string>& said_parts,
                                 const std::string& broadcast_error) {
  REQUIRE(ranks.size() == 3);
  for (auto& r : ranks) CHECK(r->let_ranks_leave());
  for (auto& r : ranks) r->set_timeout(silent ? 2.0 : 20.0);
  float before[3] = {1, 2, 4};
  on_every_rank(ranks, [&](int r, Communicator& c) {
    c.allreduce_sum(&before[r], 1, dtnn::DType::float32, "all");
  });
  CHECK(before[1] == 7.0f);
  std::shared_ptr<Communicator> left = ranks[2];  // silent: kept open, not called again
  ranks.pop_back();
  if (!silent) left.reset();  // closes its connection (over mqtt: says goodbye)
  StderrCapture captured;
  float after[2] = {1, 2};
  std::vector<float> mine[2] = {{10, 11}, {20, 21}};
  std::vector<std::vector<float>> all(2, std::vector<float>(6, -1.0f));
  on_every_rank(ranks, [&](int r, Communicator& c) {
    c.allreduce_sum(&after[r], 1, dtnn::DType::float32, "sum");
    c.allgather(mine[r].data(), all[static_cast<std::size_t>(r)].data(), 2, dtnn::DType::float32,
                "gather");
  });
  const std::string said = captured.text();
  CHECK(after[0] == 3.0f);
  CHECK(after[1] == 3.0f);
  for (const auto& a : all) CHECK(a == std::vector<float>{10, 11, 20, 21, 0, 0});
  for (const auto& part : said_parts) CHECK(said.find(part) != std::string::npos);
  float x = 0;  // a broadcast from the rank that left cannot be
  CHECK(error_of([&] { ranks[0]->broadcast(&x, 1, dtnn::DType::float32, 2, "from 2"); }) ==
        broadcast_error);
  while (!ranks.empty()) ranks.pop_back();  // the others first, as they end in a run
}

}  // namespace dtnn::test
