// mpi: the Communicator over MPI_COMM_WORLD (a duplicate of it, so dtnn's collectives never match
// a user's). MPI is initialised here when the launcher has not done so, finalised at exit, and an
// error on any rank aborts the whole job through MPI_Abort.
#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
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

class MpiRequest final : public CommRequest {
 public:
  explicit MpiRequest(MPI_Request r) : request_(r) {}
  ~MpiRequest() override {
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  void wait() override { check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait"); }
  bool test() override {
    int done = 0;
    check(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

 private:
  MPI_Request request_;
};

class Mpi final : public Communicator {
 public:
  Mpi() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      std::atexit(finalize_at_exit);
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    if (size_ > 1) set_job_abort_handler(abort_world);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(void* data, std::size_t count, DType dtype) override {
    auto* bytes = static_cast<char*>(data);
    for (std::size_t done = 0; done < count; done += kMaxCount) {
      const std::size_t n = std::min(kMaxCount, count - done);
      check(MPI_Allreduce(MPI_IN_PLACE, bytes + done * dtype_size(dtype), static_cast<int>(n),
                          mpi_type(dtype), MPI_SUM, comm_),
            "MPI_Allreduce");
    }
  }

  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count,
                                              DType dtype) override {
    if (count > kMaxCount) throw Error("MPI: non-blocking allreduce above 2^30 elements");
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), mpi_type(dtype), MPI_SUM,
                         comm_, &r),
          "MPI_Iallreduce");
    return std::make_unique<MpiRequest>(r);
  }

  void broadcast(void* data, std::size_t count, DType dtype, int root) override {
    auto* bytes = static_cast<char*>(data);
    for (std::size_t done = 0; done < count; done += kMaxCount) {
      const std::size_t n = std::min(kMaxCount, count - done);
      check(MPI_Bcast(bytes + done * dtype_size(dtype), static_cast<int>(n), mpi_type(dtype), root,
                      comm_),
            "MPI_Bcast");
    }
  }

  void allgather(const void* send, void* recv, std::size_t count, DType dtype) override {
    if (count > kMaxCount) throw Error("MPI: allgather above 2^30 elements per rank");
    check(MPI_Allgather(send == recv ? MPI_IN_PLACE : send, static_cast<int>(count),
                        mpi_type(dtype), recv, static_cast<int>(count), mpi_type(dtype), comm_),
          "MPI_Allgather");
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

  std::string describe() const override {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(library, &length);
    std::string lib(library, static_cast<std::size_t>(length));
    if (auto cut = lib.find_first_of(",\n"); cut != std::string::npos) lib.resize(cut);
    return "mpi: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " on " + host +
           ", " + lib;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

Plugin* create(const Params&, const PluginContext&) { return new Mpi(); }

}  // namespace

DTNN_PLUGIN("communicator", "mpi", "MPI collectives over MPI_COMM_WORLD (Open MPI, MPICH, ...)",
            "{}", create)
