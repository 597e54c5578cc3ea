// tcp: the Communicator over TCP connections between processes started by hand, by a script or
// on different machines, with no MPI job: rank 0 listens at `server`, the others connect to it
// (star.hpp: rank 0 sums and forwards). TLS 1.3 with mutual certificate authentication when the
// run gives tls_ca, tls_cert and tls_key; without them a warning says the exchange is in clear.
// Collectives run in call order on one thread of their own, so a non-blocking allreduce proceeds
// while backward computes; an error (a peer gone, a malformed frame, the timeout) names the peer
// and the collective, and fails that collective and every later one.
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "endpoint.hpp"
#include "rendezvous.hpp"
#include "star.hpp"
#include "tls.hpp"

namespace {

using namespace dtnn;
using namespace dtnn_tcp;

constexpr const char* kParameters = R"({"rank": null, "world_size": null, "server": null,
    "tls_ca": "", "tls_cert": "", "tls_key": "", "connect_timeout_s": 60})";

// The first of the environment variables that is set, or "".
std::string environment(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (const char* v = std::getenv(n); v && *v) return v;
  return "";
}

// An integer parameter, or the environment's (torchrun's names, then PyDTNN 3.x's).
int int_setting(const Params& p, const char* key, std::initializer_list<const char*> names) {
  if (!p.is_null(key)) return static_cast<int>(p.get_int(key));
  const std::string v = environment(names);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0 || n > 1 << 20) {
    std::string list;
    for (const char* name : names) list += (list.empty() ? "" : " or ") + std::string(name);
    p.fail(key, v.empty() ? "an integer (or the environment's " + list + ")"
                          : "an integer; the environment's " + list + " is \"" + v + "\"");
  }
  return static_cast<int>(n);
}

std::string server_setting(const Params& p) {
  if (!p.is_null("server")) return p.get_string("server");
  for (auto [host, port] : {std::pair{"MASTER_ADDR", "MASTER_PORT"}, {"PYMPI_ADDR", "PYMPI_PORT"}})
    if (const std::string h = environment({host}); !h.empty())
      return h + ":" + (environment({port}).empty() ? "29500" : environment({port}));
  p.fail("server", "rank 0's host:port (or the environment's MASTER_ADDR and MASTER_PORT)");
}

std::string file_setting(const Params& p, const char* key, const char* variable) {
  const std::string given = p.get_string(key);
  return given.empty() ? environment({variable}) : given;
}

// A collective in the queue: its work, and the promise its caller waits on.
struct Job {
  std::function<void()> work;
  std::promise<void> done;
};

class TcpRequest final : public CommRequest {
 public:
  explicit TcpRequest(std::future<void> done) : done_(std::move(done)) {}
  ~TcpRequest() override {
    if (!done_.valid()) return;
    try {
      done_.get();
    } catch (const std::exception& e) {
      log_warning(std::string("an unwaited allreduce failed: ") + e.what());
    }
  }
  void wait() override {
    if (done_.valid()) done_.get();  // rethrows the collective's error
  }
  bool test() override {
    return !done_.valid() || done_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::future<void> done_;
};

class Tcp final : public Communicator {
 public:
  explicit Tcp(const Params& p) {
    rank_ = int_setting(p, "rank", {"RANK", "PYMPI_RANK"});
    size_ = int_setting(p, "world_size", {"WORLD_SIZE", "PYMPI_SIZE"});
    if (size_ < 1) p.fail("world_size", "the number of ranks, >= 1");
    if (rank_ >= size_)
      p.fail("rank", "a rank from 0 to world_size - 1 = " + std::to_string(size_ - 1) + ", got " +
                         std::to_string(rank_));
    server_ = parse_host_port(server_setting(p), p.key_path("server"));
    const double connect_s = p.get_double("connect_timeout_s");
    if (!(connect_s >= 0)) p.fail("connect_timeout_s", "a number of seconds >= 0 (0: forever)");
    const TlsFiles files{file_setting(p, "tls_ca", "DTNN_TLS_CA"),
                         file_setting(p, "tls_cert", "DTNN_TLS_CERT"),
                         file_setting(p, "tls_key", "DTNN_TLS_KEY")};
    if (files.on()) tls_ = std::make_unique<TlsContext>(files, rank_ == 0, p.where());
    ::signal(SIGPIPE, SIG_IGN);  // a peer gone mid-send is an error to report, not a signal
    const Deadline deadline = Deadline::after(connect_s);
    std::vector<std::unique_ptr<Stream>> links;
    if (size_ > 1 && rank_ == 0) links = gather_ranks(server_, size_, tls_.get(), deadline);
    if (size_ > 1 && rank_ != 0)
      links.push_back(join_rank0(server_, rank_, size_, tls_.get(), deadline));
    star_ = std::make_unique<Star>(rank_, size_, std::move(links));
    if (!tls_ && size_ > 1 && rank_ == 0)
      log_warning(
          "tcp: no TLS (parallel.communicator.tls_ca, tls_cert, tls_key): gradients and "
          "weights cross the network in clear, and any process that reaches " +
          server_.text() + " could have joined as a rank (docs/federated.md)");
    worker_ = std::thread([this] { run_jobs(); });
  }

  ~Tcp() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void set_timeout(double seconds) override { timeout_ = seconds; }

  void allreduce_sum(void* data, std::size_t count, DType dtype, std::string_view name) override {
    enqueue(name, [=, this](std::uint64_t seq, Deadline d) {
      star_->allreduce_sum(data, count, dtype, seq, d);
    }).get();
  }

  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                              std::string_view name) override {
    return std::make_unique<TcpRequest>(enqueue(name, [=, this](std::uint64_t seq, Deadline d) {
      star_->allreduce_sum(data, count, dtype, seq, d);
    }));
  }

  void broadcast(void* data, std::size_t count, DType dtype, int root,
                 std::string_view name) override {
    if (root < 0 || root >= size_)
      throw Error("tcp: broadcast '" + std::string(name) + "' from rank " + std::to_string(root) +
                  " of " + std::to_string(size_));
    enqueue(name, [=, this](std::uint64_t seq, Deadline d) {
      star_->broadcast(data, count, dtype, root, seq, d);
    }).get();
  }

  void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                 std::string_view name) override {
    enqueue(name, [=, this](std::uint64_t seq, Deadline d) {
      star_->allgather(send, recv, count, dtype, seq, d);
    }).get();
  }

  void barrier(std::string_view name) override {
    enqueue(name, [this](std::uint64_t seq, Deadline d) {
      star_->allreduce_sum(nullptr, 0, DType::float32, seq, d);
    }).get();
  }

  std::string describe() const override {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return "tcp: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " on " + host +
           ", rank 0 at " + server_.text() + (tls_ ? ", TLS 1.3 (mutual)" : ", no TLS");
  }

 private:
  // Queues a collective; it runs after those called before it, numbered in call order (which all
  // ranks share), under parallel.timeout_s from when it starts.
  std::future<void> enqueue(std::string_view name,
                            std::function<void(std::uint64_t, Deadline)> collective) {
    const std::uint64_t seq = ++seq_;
    Job job;
    job.work = [this, seq, name = std::string(name), collective = std::move(collective)] {
      if (!failed_.empty()) throw Error(failed_);
      try {
        collective(seq, Deadline::after(timeout_));
      } catch (const std::exception& e) {
        failed_ =
            std::string(e.what()) + " (collective #" + std::to_string(seq) + " '" + name + "')";
        throw Error(failed_);
      }
    };
    std::future<void> done = job.done.get_future();
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    wake_.notify_one();
    return done;
  }

  void run_jobs() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      try {
        job.work();
        job.done.set_value();
      } catch (...) {
        job.done.set_exception(std::current_exception());
      }
    }
  }

  int rank_ = 0, size_ = 1;
  HostPort server_;
  std::unique_ptr<TlsContext> tls_;
  std::unique_ptr<Star> star_;
  double timeout_ = 0;
  std::uint64_t seq_ = 0;  // the caller's thread
  std::string failed_;     // the worker's: the first error, repeated by every later collective
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread worker_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Tcp(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "communicator", .name = "tcp",
                   .description =
                       "collectives over TCP (TLS 1.3 with mutual certificates): "
                       "processes started by hand, no MPI job (docs/federated.md)",
                   .parameters = kParameters, .factory = create)
