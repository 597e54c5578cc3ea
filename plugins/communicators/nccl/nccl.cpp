// device_communicator "cuda_nccl": gradient buckets all-reduced by NCCL on the GPU, on a stream of
// their own, so that the reduction of one bucket overlaps the backward pass that produces the
// next. One GPU per rank (the device runtime picked it by local rank); NCCL's unique id travels
// from rank 0 over the host communicator (MPI).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/device_communicator.hpp"

namespace {

using namespace dtnn;
using dtnn::cuda::Context;

#define DTNN_NCCL(call)                                                                  \
  do {                                                                                   \
    const ncclResult_t dtnn_r = (call);                                                  \
    if (dtnn_r != ncclSuccess)                                                           \
      ::dtnn::cuda::fail("NCCL", ncclGetErrorString(dtnn_r), #call, __FILE__, __LINE__); \
  } while (0)

ncclDataType_t nccl_type(DType t) { return t == DType::float64 ? ncclFloat64 : ncclFloat32; }

class Nccl;

// An allreduce queued on NCCL's stream; `done` is recorded after it there.
class NcclRequest final : public CommRequest {
 public:
  NcclRequest(Nccl& owner, cudaEvent_t done) : owner_(owner), done_(done) {}
  ~NcclRequest() override;
  void wait() override;
  bool test() override {
    const cudaError_t e = cudaEventQuery(done_);
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();  // not an error: clear it
      return false;
    }
    DTNN_CUDA(e);
    return true;
  }

 private:
  Nccl& owner_;
  cudaEvent_t done_;
};

class Nccl final : public DeviceCommunicator {
 public:
  ~Nccl() override {
    if (comm_) {
      cudaStreamSynchronize(stream_);
      ncclCommFinalize(comm_);
      ncclCommDestroy(comm_);
    }
    for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
    if (issued_) cudaEventDestroy(issued_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void open(Communicator& host) override {
    Context& c = Context::get();  // the device runtime has set this rank's GPU
    rank_ = host.rank();
    size_ = host.size();
    ncclUniqueId id{};
    if (rank_ == 0) DTNN_NCCL(ncclGetUniqueId(&id));
    static_assert(sizeof id % sizeof(float) == 0);
    host.broadcast(&id, sizeof id / sizeof(float), DType::float32, 0, "NCCL unique id");
    DTNN_CUDA(cudaSetDevice(c.ordinal()));
    // The highest priority: a reduction's kernels start as soon as its bucket is packed instead
    // of queueing behind the rest of backward.
    int least = 0, greatest = 0;
    DTNN_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    DTNN_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    DTNN_CUDA(cudaEventCreateWithFlags(&issued_, cudaEventDisableTiming));
    DTNN_NCCL(ncclCommInitRank(&comm_, size_, id, rank_));
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                              std::string_view) override {
    after_compute();
    DTNN_NCCL(ncclAllReduce(data, data, count, nccl_type(dtype), ncclSum, comm_, stream_));
    return std::make_unique<NcclRequest>(*this, record_done());
  }

  void broadcast(void* data, std::size_t count, DType dtype, int root, std::string_view) override {
    after_compute();
    DTNN_NCCL(ncclBroadcast(data, data, count, nccl_type(dtype), root, comm_, stream_));
    NcclRequest(*this, record_done()).wait();
  }

  std::string describe() const override {
    int version = 0;
    ncclGetVersion(&version);
    return "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
           "." + std::to_string(version % 100) + ": rank " + std::to_string(rank_) + " of " +
           std::to_string(size_) + " on GPU " + std::to_string(Context::get().ordinal());
  }

  // The compute stream waits for `done` (the host does not), then the event goes back to the pool.
  void compute_waits_for(cudaEvent_t done) {
    DTNN_CUDA(cudaStreamWaitEvent(Context::get().stream(), done, 0));
  }
  void give_back(cudaEvent_t e) { free_events_.push_back(e); }

 private:
  // NCCL's stream waits for the compute issued so far (what wrote the bucket).
  void after_compute() {
    DTNN_CUDA(cudaEventRecord(issued_, Context::get().stream()));
    DTNN_CUDA(cudaStreamWaitEvent(stream_, issued_, 0));
  }
  cudaEvent_t record_done() {
    cudaEvent_t done = take_event();
    DTNN_CUDA(cudaEventRecord(done, stream_));
    return done;
  }
  // Events are reused: none is created in the steady-state step.
  cudaEvent_t take_event() {
    if (free_events_.empty()) {
      cudaEvent_t e = nullptr;
      DTNN_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      return e;
    }
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }

  int rank_ = 0, size_ = 1;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t issued_ = nullptr;
  std::vector<cudaEvent_t> free_events_;
};

NcclRequest::~NcclRequest() { owner_.give_back(done_); }

void NcclRequest::wait() { owner_.compute_waits_for(done_); }

Plugin* create(const Params&, const PluginContext&) { return new Nccl(); }

}  // namespace

DTNN_CUDA_PLUGIN("device_communicator", "nccl",
                 "NCCL collectives on device memory, on a stream of their own (one GPU per rank)",
                 "{}", create)
