// mpi: the Communicator over MPI_COMM_WORLD (a duplicate of it, so dtnn's collectives never match
// a user's). MPI is initialised here when the launcher has not done so, finalised at exit, and an
// error on any rank aborts the whole job through MPI_Abort.
#include <mpi.h>
#include <unistd.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "arrivals.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("MPI: ") + what + " failed: " + std::string(text, length));
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return MPI_FLOAT;
    case DType::float64:
      return MPI_DOUBLE;
  }
  throw Error("MPI: unsupported dtype");
}

// MPI counts are int: larger buffers go in pieces of at most this many elements.
constexpr std::size_t kMaxCount = INT_MAX / 2;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void abort_world(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

// Open MPI's non-blocking allreduce (libnbc) picks a binomial tree by default, which takes twice
// the time of the blocking MPI_Allreduce on gradient-sized buffers; its ring matches it (see
// bench/allreduce_bench). Set before MPI_Init, and only where the user has not chosen.
void prefer_ring_iallreduce() {
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
}

class Mpi;

// A non-blocking allreduce in flight; waiting on it is watched like any collective.
class MpiRequest final : public CommRequest {
 public:
  MpiRequest(Mpi& owner, MPI_Request r, std::uint64_t seq, std::string name)
      : owner_(owner), request_(r), seq_(seq), name_(std::move(name)) {}
  ~MpiRequest() override;
  void wait() override;
  bool test() override {
    int done = 0;
    check(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

 private:
  Mpi& owner_;
  MPI_Request request_;
  std::uint64_t seq_;
  std::string name_;
};

class Mpi final : public Communicator {
 public:
  Mpi() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      prefer_ring_iallreduce();
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      std::atexit(finalize_at_exit);
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &arrivals_comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    if (size_ > 1) set_job_abort_handler(abort_world);
    arrivals_ = std::make_unique<dtnn_mpi::ArrivalBoard>(arrivals_comm_, rank_, size_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void set_timeout(double seconds) override { timeout_ = seconds; }

  void allreduce_sum(void* data, std::size_t count, DType dtype, std::string_view name) override {
    in_pieces(data, count, dtype, [&](void* piece, int n) {
      collective(
          name, "allreduce",
          [&] { return MPI_Allreduce(MPI_IN_PLACE, piece, n, mpi_type(dtype), MPI_SUM, comm_); },
          [&](MPI_Request* r) {
            return MPI_Iallreduce(MPI_IN_PLACE, piece, n, mpi_type(dtype), MPI_SUM, comm_, r);
          });
    });
  }

  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                              std::string_view name) override {
    if (count > kMaxCount) throw Error("MPI: non-blocking allreduce above 2^30 elements");
    const std::uint64_t seq = enter(name);
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), mpi_type(dtype), MPI_SUM,
                         comm_, &r),
          "MPI_Iallreduce");
    return std::make_unique<MpiRequest>(*this, r, seq, std::string(name));
  }

  void broadcast(void* data, std::size_t count, DType dtype, int root,
                 std::string_view name) override {
    in_pieces(data, count, dtype, [&](void* piece, int n) {
      collective(
          name, "broadcast", [&] { return MPI_Bcast(piece, n, mpi_type(dtype), root, comm_); },
          [&](MPI_Request* r) { return MPI_Ibcast(piece, n, mpi_type(dtype), root, comm_, r); });
    });
  }

  void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                 std::string_view name) override {
    if (count > kMaxCount) throw Error("MPI: allgather above 2^30 elements per rank");
    const int n = static_cast<int>(count);
    const void* from = send == recv ? MPI_IN_PLACE : send;
    const MPI_Datatype type = mpi_type(dtype);
    collective(
        name, "allgather", [&] { return MPI_Allgather(from, n, type, recv, n, type, comm_); },
        [&](MPI_Request* r) { return MPI_Iallgather(from, n, type, recv, n, type, comm_, r); });
  }

  void alltoall(const void* send, void* recv, std::size_t count, DType dtype,
                std::string_view name) override {
    if (count > kMaxCount) throw Error("MPI: alltoall above 2^30 elements per block");
    const int n = static_cast<int>(count);
    const MPI_Datatype type = mpi_type(dtype);
    collective(
        name, "alltoall", [&] { return MPI_Alltoall(send, n, type, recv, n, type, comm_); },
        [&](MPI_Request* r) { return MPI_Ialltoall(send, n, type, recv, n, type, comm_, r); });
  }

  // CUDA-aware: Open MPI built with CUDA support says so at run time (its cuda extension);
  // other MPI libraries are not assumed to be.
  bool accepts_memory_of(Device d) const override {
    if (d == Device::cpu) return true;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return d == Device::cuda && MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
  }

  void barrier(std::string_view name) override {
    collective(
        name, "barrier", [&] { return MPI_Barrier(comm_); },
        [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
  }

  std::string describe() const override {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(library, &length);
    std::string lib(library, static_cast<std::size_t>(length));
    if (auto cut = lib.find_first_of(",\n"); cut != std::string::npos) lib.resize(cut);
    return "mpi: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " on " + host +
           ", " + lib + (accepts_memory_of(Device::cuda) ? ", CUDA-aware" : "");
  }

  // Completes r, collective #seq. With a timeout the wait polls, reading the other ranks'
  // announcements, and past the timeout reports who is missing and ends the job.
  void wait(MPI_Request& r, std::uint64_t seq, std::string_view name, const char* kind) {
    if (!watched()) {
      check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    double next_heartbeat = heartbeat_interval();
    for (std::uint64_t spin = 0;; ++spin) {
      int done = 0;
      check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (spin % 256 != 255) continue;
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > next_heartbeat) {
        arrivals_->heartbeat();
        next_heartbeat = waited + heartbeat_interval();
      } else {
        arrivals_->poll();
      }
      if (waited > timeout_) time_out(seq, name, kind, waited);
      std::this_thread::yield();  // an oversubscribed rank lets the late ones run
    }
  }

 private:
  bool watched() const { return timeout_ > 0 && size_ > 1; }
  // A waiting rank says it is alive this often; silent for 3 intervals counts as not answering.
  double heartbeat_interval() const { return std::clamp(timeout_ / 8, 0.05, 2.0); }

  std::uint64_t enter(std::string_view name) {
    ++seq_;
    if (watched()) arrivals_->announce(seq_, name);
    return seq_;
  }

  // One blocking collective, numbered and named: the plain blocking call when unwatched, else its
  // non-blocking twin (start) and a watched wait. Both return an MPI error code.
  template <class Blocking, class Start>
  void collective(std::string_view name, const char* kind, Blocking blocking, Start start) {
    const std::uint64_t seq = enter(name);
    if (!watched()) {
      check(blocking(), kind);
      return;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    check(start(&r), kind);
    wait(r, seq, name, kind);
  }

  // MPI counts are int: f(piece, n) for each piece of at most kMaxCount elements.
  template <class F>
  static void in_pieces(void* data, std::size_t count, DType dtype, F&& f) {
    auto* bytes = static_cast<char*>(data);
    std::size_t done = 0;
    do {
      const std::size_t n = std::min(kMaxCount, count - done);
      f(bytes + done * dtype_size(dtype), static_cast<int>(n));
      done += n;
    } while (done < count);
  }

  [[noreturn]] void time_out(std::uint64_t seq, std::string_view name, const char* kind,
                             double waited) {
    arrivals_->poll();
    std::string late = arrivals_->late(seq, 3 * heartbeat_interval());
    if (late.empty()) late = "every rank reached it and is answering (an MPI problem?)";
    char head[96];
    std::snprintf(head, sizeof head, "waited %.1f s (parallel.timeout_s = %g) in collective #",
                  waited, timeout_);
    std::fflush(stdout);
    std::fprintf(stderr, "\ndtnn: error: %s%s%llu '%.*s' (%s): %s; ending the job\n",
                 log_rank_prefix().c_str(), head, static_cast<unsigned long long>(seq),
                 static_cast<int>(name.size()), name.data(), kind, late.c_str());
    abort_job(1);
  }

  MPI_Comm comm_ = MPI_COMM_NULL, arrivals_comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  double timeout_ = 0;
  std::uint64_t seq_ = 0;
  std::unique_ptr<dtnn_mpi::ArrivalBoard> arrivals_;
};

MpiRequest::~MpiRequest() {
  if (request_ != MPI_REQUEST_NULL) owner_.wait(request_, seq_, name_, "allreduce");
}

void MpiRequest::wait() { owner_.wait(request_, seq_, name_, "allreduce"); }

Plugin* create(const Params&, const PluginContext&) { return new Mpi(); }

}  // namespace

// "auto" picks this communicator when an MPI launcher (Open MPI's, a PMI or PMIx one, MVAPICH's)
// started the process.
DTNN_EXPORT_PLUGIN(.kind = "communicator", .name = "mpi",
                   .description = "MPI collectives over MPI_COMM_WORLD (Open MPI, MPICH, ...)",
                   .traits = R"({"launched_when": ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                                   "MV2_COMM_WORLD_SIZE"]})",
                   .factory = create)
