// Key functions of the core interfaces: their vtables and typeinfo are emitted here, once, and
// exported, so dynamic_cast across the plugin boundary compares one typeinfo.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/device_communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/scheduler.hpp"
#include "dtnn/tokenizer.hpp"

namespace dtnn {

Plugin::~Plugin() = default;
Layer::~Layer() = default;
ConvAlgorithm::~ConvAlgorithm() = default;
Optimizer::~Optimizer() = default;
Scheduler::~Scheduler() = default;
Dataset::~Dataset() = default;
Tokenizer::~Tokenizer() = default;
Communicator::~Communicator() = default;

void Communicator::alltoall(const void* send, void* recv, std::size_t count, DType dtype,
                            std::string_view name) {
  const auto ranks = static_cast<std::size_t>(size()), me = static_cast<std::size_t>(rank());
  const std::size_t block = count * dtype_size(dtype);
  std::vector<std::byte> all(ranks * ranks * block);
  allgather(send, all.data(), ranks * count, dtype, name);
  auto* out = static_cast<std::byte*>(recv);
  for (std::size_t r = 0; r < ranks; ++r)  // rank r's block for this rank
    std::memcpy(out + r * block, all.data() + (r * ranks + me) * block, block);
}

std::vector<std::string> allgather_text(Communicator& comm, const std::string& text,
                                        std::size_t max_chars, std::string_view name) {
  const std::size_t line = max_chars + 1;  // a 0 ends each
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<double> mine(line, 0.0), all(line * ranks, 0.0);
  for (std::size_t i = 0; i < std::min(max_chars, text.size()); ++i)
    mine[i] = static_cast<unsigned char>(text[i]);
  comm.allgather(mine.data(), all.data(), line, DType::float64, name);
  std::vector<std::string> texts(ranks);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < line && all[r * line + i] != 0; ++i)
      texts[r] += static_cast<char>(all[r * line + i]);
  return texts;
}
CommRequest::~CommRequest() = default;
DeviceCommunicator::~DeviceCommunicator() = default;
Loss::~Loss() = default;
Metric::~Metric() = default;
Codec::~Codec() = default;
void Codec::join(Communicator&) {}
void Codec::mask(std::span<unsigned char>, std::uint64_t) const {}
bool Codec::survives_departures() const { return combination() != Combination::reduce; }
void Codec::unmask(std::span<unsigned char>, std::uint64_t, std::span<const int>) const {}
void Codec::combine(std::span<unsigned char>, std::span<const unsigned char>) const {
  throw Error("a codec says its payloads combine (Codec::Combination::combine) but has no combine");
}
std::size_t Codec::reduce(Communicator&, std::span<float>, std::span<const BucketMatrix>,
                          std::vector<float>&, const std::string&, std::span<float>) const {
  throw Error(
      "a codec says it sums over the ranks itself (Codec::Combination::reduce) but has no "
      "reduce");
}

void Loss::backward_through_softmax(const Tensor&, const Tensor&, Tensor&) {
  throw Error("loss '" + name() + "' has no combined softmax gradient");
}

UpdateRule parse_update_rule(const Params& p) {
  const std::string rule = p.has("rule") ? p.get_string("rule") : "textbook";
  if (rule == "textbook") return UpdateRule::textbook;
  if (rule == "pydtnn") return UpdateRule::pydtnn;
  p.fail("rule", "\"textbook\" (PyTorch's formulas) or \"pydtnn\"");
}

double number_or_rule_default(const Params& p, std::string_view key, UpdateRule rule,
                              double textbook, double pydtnn) {
  if (!p.has(key) || p.is_null(key)) return rule == UpdateRule::pydtnn ? pydtnn : textbook;
  return p.get_double(key);
}

std::vector<Tensor> zeros_like(std::span<const Parameter> parameters) {
  std::vector<Tensor> out;
  out.reserve(parameters.size());
  for (const Parameter& p : parameters)
    out.push_back(
        Tensor::zeros(p.value.shape(), p.value.dtype(), p.value.layout(), p.value.device()));
  return out;
}

void Optimizer::step(std::span<const Parameter> parameters) {
  begin_step();
  for (std::size_t i = 0; i < parameters.size(); ++i) update(i, parameters[i]);
}

namespace {
class DoneRequest final : public CommRequest {
 public:
  void wait() override {}
  bool test() override { return true; }
};

std::atomic<JobAbortHandler> abort_handler{nullptr};
}  // namespace

void set_job_abort_handler(JobAbortHandler handler) { abort_handler = handler; }
bool job_has_other_ranks() { return abort_handler.load() != nullptr; }

void abort_job(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (JobAbortHandler h = abort_handler.load()) h(code);
  std::exit(code);
}

std::string LocalCommunicator::describe() const { return "local: one process"; }

std::unique_ptr<CommRequest> LocalCommunicator::iallreduce_sum(void*, std::size_t, DType,
                                                               std::string_view) {
  return std::make_unique<DoneRequest>();
}

void LocalCommunicator::allgather(const void* send, void* recv, std::size_t count, DType dtype,
                                  std::string_view) {
  if (send != recv) std::memmove(recv, send, count * dtype_size(dtype));
}

}  // namespace dtnn
