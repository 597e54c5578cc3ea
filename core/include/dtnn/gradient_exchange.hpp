// GradientExchange: sums weighted parameter gradients over ranks in buckets while backward runs,
// then hands the averaged gradients to the optimizer, bucket by bucket.
//
// Buckets follow the order in which backward finishes parameters (last layer first). Each
// parameter's gradient is packed into its bucket scaled by this rank's weight (and zeroed in
// place, as an optimizer update would); when a bucket is full its allreduce starts, non-blocking
// unless `blocking`, so communication overlaps the rest of backward. finish() waits for each
// bucket and runs the optimizer's update on the bucket itself: packing is the only copy.
// The same buckets carry weights for model averaging (average_weights) and rank 0's weights for
// the initial and final synchronisation (broadcast_weights).
//
// A model on a GPU keeps its buckets in device memory, and they reach the other ranks by one of
// PyDTNN's three routes (ExchangeRoute): NCCL on the device's own stream (no host involvement);
// device pointers handed to a CUDA-aware MPI (gpu.gpudirect); or through pinned host memory to
// any MPI.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/model.hpp"
#include "dtnn/nonfinite.hpp"

namespace dtnn {

class Optimizer;
class Codec;
class CodedAllreduce;
class DeviceCommunicator;
class DeviceRuntime;

struct ExchangeOptions {
  std::size_t bucket_bytes = std::size_t{4} << 20;
  bool blocking = false;  // PyDTNN's --use-blocking-mpi: each bucket's allreduce waits at once
  // For a model on a device: NCCL's collectives (when set), else device pointers to the host
  // communicator when gpudirect is on and it takes them, else host staging.
  DeviceCommunicator* device_comm = nullptr;
  bool gpudirect = false;
  // What goes over the wire (parallel.codec): null, the plain sum; else each bucket's sum is the
  // codec's (dtnn/coded_allreduce.hpp), blocking, on float32 models on the cpu; with
  // error_feedback each bucket keeps what its payloads dropped. Model averaging goes through it
  // too when the codec carries weights.
  const Codec* codec = nullptr;
  bool error_feedback = true;
  // PyDTNN 3.x's --parallel-pipeline (parallel.pipeline): a step's sums stay in flight through the
  // next step's forward and backward and are applied at its end (one step stale); cpu models.
  bool pipeline = false;
  // Ranks may leave mid-run (ModelSyncOptions::ranks_may_leave): model averaging carries each
  // rank's weight beside its values and divides by their sum, so a rank that left during the
  // averaging leaves an average of the others rather than shrunken weights.
  bool ranks_may_leave = false;
};

enum class ExchangeRoute {
  host,             // a model on the cpu: the host communicator on host memory
  device_library,   // DeviceCommunicator (NCCL) on device memory, on its stream
  device_pointers,  // the host communicator on device memory (CUDA-aware MPI, gpu.gpudirect)
  host_staged,      // device buckets copied to pinned host memory, reduced there, copied back
};
DTNN_CORE_EXPORT const char* to_string(ExchangeRoute route);

struct ExchangeStats {
  double wait_seconds = 0;  // time spent waiting for allreduces (blocking: inside them)
  std::int64_t steps = 0;
  std::uint64_t bytes_sent = 0;  // what this rank put on the wire: gradient buckets, or payloads
};

class DTNN_CORE_EXPORT GradientExchange final : public GradientListener {
 public:
  GradientExchange(Model& model, Communicator& comm, ExchangeOptions options);
  ~GradientExchange();

  // A step: begin(weight), model.backward(loss, y, this) or contribute_nothing(), finish().
  // weight multiplies this rank's gradients (e.g. its share of the global batch).
  void begin(double weight);
  void gradients_ready(std::size_t first, std::size_t count) override;
  void contribute_nothing();  // a rank without samples in this step: zero gradients
  // Returns false when a summed gradient is not finite (unless policy is ignore; every rank sees
  // the same sums, so every rank returns the same). Then skip_batch updates nothing (every bucket
  // lands before the first update), and stop leaves the parameters of the buckets after the
  // first non-finite one as they were.
  // Pipelined: finish applies the previous step's sums (none at the first) and leaves this step's
  // in flight, unless drain_at_next_finish() was called: then it applies both (an epoch's last
  // step, so that epochs, validations and checkpoints see every gradient).
  bool finish(Optimizer& optimizer, NonFinitePolicy policy = NonFinitePolicy::ignore);
  void drain_at_next_finish() { drain_next_ = true; }
  // Pipelined: applies the sums in flight, if any (a stop between epochs); false when one was not
  // finite (and the policy not ignore).
  bool drain(Optimizer& optimizer, NonFinitePolicy policy);

  // values = sum over ranks of weight * values (model averaging).
  void average_weights(double weight);
  // Every rank takes rank `root`'s weights.
  void broadcast_weights(int root);

  std::size_t num_buckets() const { return buckets_.size(); }
  // Whether buckets keep error-feedback residuals (a codec with parallel.codec_error_feedback).
  bool keeps_residuals() const { return coded_ && options_.error_feedback; }
  // This rank's residuals laid out as the buckets are (zero where none was kept yet), for a
  // checkpoint; set_residuals restores them.
  std::vector<float> residuals() const;
  void set_residuals(std::span<const float> residuals);
  // A reduce codec's state, bucket by bucket (PowerSGD's factors: the same on every rank; empty
  // before the first exchange and for other codecs); set_codec_states restores it.
  std::vector<std::vector<float>> codec_states() const;
  void set_codec_states(std::vector<std::vector<float>> states);
  ExchangeRoute route() const { return route_; }
  const ExchangeStats& stats() const { return stats_; }

 private:
  struct Bucket {
    std::vector<std::size_t> parameters;  // indices into model.parameters()
    std::vector<std::int64_t> offsets;    // element offset of each in the bucket
    std::vector<BucketMatrix> matrices;   // each as a matrix, for a codec on matrices
    std::int64_t offset = 0, numel = 0;   // the bucket's region of flat_
    std::size_t pending = 0;              // parameters not yet packed this step
    std::unique_ptr<CommRequest> request;
    std::unique_ptr<CommRequest> in_flight;  // pipelined: the previous step's, on other_
    std::int64_t in_flight_started_ns = -1;
    std::string name;       // "gradients, bucket 2 of 5 (fc1.weight ...)": the collective's name
    std::size_t layer = 0;  // the model's layer of its first parameter
    // The trace (dtnn/trace.hpp): when its collective started and whether its completion was
    // seen; its labels (allreduce, wait) in trace generation `labels_of`.
    std::int64_t started_ns = -1;
    std::uint32_t allreduce_label = 0, wait_label = 0;
    std::uint64_t labels_of = ~std::uint64_t{0};
  };
  void trace_labels(Bucket& b);     // b's labels, interned once per trace generation
  void trace_completed(Bucket& b);  // records b's collective as completed now
  void start(Bucket& bucket);
  void progress();  // lets the library advance the allreduces in flight
  Tensor region(const Bucket& b, std::size_t i) const;  // parameter i's slice of flat_
  void zero_gaps(const Bucket& b);  // coded sums: the alignment gaps in b's region of flat_
  Tensor region_of(const Tensor& buffer, const Bucket& b, std::size_t i) const;
  // Waits for the sums of `order` (bucket indices; their requests `request` of each bucket),
  // checks them under policy and updates the parameters from `buffer`.
  bool apply(const Tensor& buffer, const std::vector<std::size_t>& order,
             std::unique_ptr<CommRequest> Bucket::*request, Optimizer& optimizer,
             NonFinitePolicy policy);
  // dst = weight * src on the model's device; src zeroed when `consume`.
  void pack(const Tensor& src, const Tensor& dst, double weight, bool consume);
  // The allreduce (or broadcast from root >= 0) of flat_'s elements [offset, offset + count) by
  // the route; null when it has completed (blocking), else the request to wait on. landed()
  // completes it on flat_ once waited for (host staging: the copy back).
  std::unique_ptr<CommRequest> collective(std::int64_t offset, std::int64_t count,
                                          const std::string& name, bool blocking, int root = -1);
  void landed(std::int64_t offset, std::int64_t count);
  void* at(const Tensor& t, std::int64_t offset) const;  // t's element `offset`
  void pack_all_values(double weight);                   // every parameter's value into flat_
  void unpack_all_values();                              // and back

  Model& model_;
  Communicator& comm_;
  ExchangeOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<std::size_t> bucket_of_, slot_of_;  // per parameter: its bucket and position
  std::vector<std::size_t> started_;              // bucket indices, in start order
  Tensor flat_;  // every bucket, back to back, on the model's device
  // Pipelined: the buffer whose sums are in flight (the previous step's), in start order.
  Tensor other_;
  std::vector<std::size_t> in_flight_;
  bool drain_next_ = false;
  Tensor staging_;                    // host_staged: flat_'s pinned host mirror
  DeviceRuntime* runtime_ = nullptr;  // the model's device (null on the cpu)
  ExchangeRoute route_ = ExchangeRoute::host;
  std::unique_ptr<CodedAllreduce> coded_;
  double weight_ = 1;
  ExchangeStats stats_;
};

}  // namespace dtnn
