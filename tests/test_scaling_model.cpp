// The network's costs (dtnn/network_model.hpp), the simulated network (dtnn/simulated_network.hpp)
// and dtnn predict's arithmetic (dtnn/scaling_model.hpp), on cases computed by hand.
#include <doctest/doctest.h>

#include <chrono>

#include "dtnn/network_model.hpp"
#include "dtnn/scaling_model.hpp"
#include "dtnn/simulated_network.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

// 10 us per message, 8 Gb/s = 1 byte per ns.
const NetworkModel kNet{10, 8};

// Two ranks that are not there: every collective returns at once.
class TwoRanks final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(void*, std::size_t, DType, std::string_view) override {}
  std::unique_ptr<CommRequest> iallreduce_sum(void* d, std::size_t n, DType t,
                                              std::string_view s) override {
    return local_.iallreduce_sum(d, n, t, s);
  }
  void broadcast(void*, std::size_t, DType, int, std::string_view) override {}
  void allgather(const void*, void*, std::size_t, DType, std::string_view) override {}
  void barrier(std::string_view) override {}
  std::string describe() const override { return "two ranks"; }

 private:
  LocalCommunicator local_;
};

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Data 1 ms, loss 0.5 ms at 32 samples; layer 0 (1 MB of parameters), layer 1 (none), layer 2
// (2 MB); buckets of 1.5 MB: layer 2's bucket is full after its backward, layer 0's closes at the
// end.
StepCost three_layers() {
  StepCost c;
  c.batch = 32;
  c.data_s = 1e-3;
  c.loss_s = 0.5e-3;
  c.layers = {{2e-3, 4e-3, 1e6, 0.1e-3}, {1e-3, 1e-3, 0, 0}, {1e-3, 2e-3, 2e6, 0.2e-3}};
  return c;
}

ScalingOptions options() {
  ScalingOptions o;
  o.network = kNet;
  o.bucket_bytes = 1.5e6;
  o.batch_size = 32;
  return o;
}

}  // namespace

TEST_CASE("the network model: ring or tree allreduce, whichever is cheaper") {
  CHECK(kNet.message_seconds(1e6) == doctest::Approx(10e-6 + 1e-3));
  // 2 ranks: the tree (one exchange of the whole buffer) beats the ring's two half-messages.
  CHECK(kNet.allreduce_seconds(1e6, 2) == doctest::Approx(10e-6 + 1e-3));
  // 4 ranks, 1 MB: ring 6 x (10 us + 0.25 ms) = 1.56 ms against the tree's 2 x 1.01 ms.
  CHECK(kNet.allreduce_seconds(1e6, 4) == doctest::Approx(1.56e-3));
  // 4 ranks, 16 bytes: the tree's 2 latencies.
  CHECK(kNet.allreduce_seconds(16, 4) == doctest::Approx(20.032e-6));
  CHECK(kNet.allreduce_seconds(1e6, 1) == 0);
  CHECK(kNet.broadcast_seconds(1e6, 8) == doctest::Approx(3 * 1.01e-3));
  CHECK(parse_network("latency_us=5,bandwidth_gbps=25", "--network").bandwidth_gbps == 25);
  CHECK(test::error_of([] { parse_network("latency_us=-5", "--network"); }) ==
        "--network: 'latency_us=-5': expected latency_us=MICROSECONDS or bandwidth_gbps=GIGABITS "
        "(numbers >= 0)");
  CHECK(test::error_of([] { parse_network("latency=5", "--network"); }) ==
        "--network: unknown 'latency'; expected latency_us or bandwidth_gbps");
}

TEST_CASE("dtnn predict's step of N ranks, computed by hand") {
  const std::vector<int> ranks{1, 4};
  const auto points = predict_scaling(three_layers(), options(), ranks);
  // One rank: 1 + 0.5 + forward 4 + backward 7 + updates 0.3 = 12.8 ms.
  CHECK(points[0].step_s == doctest::Approx(12.8e-3));
  CHECK(points[0].samples_per_second == doctest::Approx(2500));
  // Four ranks: layer 2's bucket (2 MB) ready at 7.5 ms, on the link until 10.56 ms; layer 0's
  // (1 MB) ready at 12.5 ms, until 14.06 ms; updates 0.2 then 0.1 ms after each lands and after
  // backward: 14.16 ms; the status allreduce: 20.032 us.
  const ScalingPoint& four = points[1];
  CHECK(four.buckets == 2);
  CHECK(four.step_s == doctest::Approx(14.180032e-3));
  CHECK(four.compute_s == doctest::Approx(12.8e-3));
  CHECK(four.comm_wait_s == doctest::Approx(1.380032e-3));
  CHECK(four.speedup == doctest::Approx(128 / 14.180032e-3 / 2500));
  CHECK(four.efficiency == doctest::Approx(four.speedup / 4));

  ScalingOptions slow = options();
  slow.network.bandwidth_gbps = 0.8;  // the link is still busy with layer 2's bucket (30.06 ms)
  // when layer 0's is ready: it goes on at 37.56 ms, for 15.06 ms; its update ends at 52.72 ms.
  CHECK(predict_step(three_layers(), slow, 4).step_s == doctest::Approx(52.74032e-3));

  ScalingOptions blocking = options();
  blocking.blocking = true;  // backward waits 3.06 then 1.56 ms
  CHECK(predict_step(three_layers(), blocking, 4).step_s == doctest::Approx(17.440032e-3));

  ScalingOptions averaging = options();
  averaging.model_sync_freq = 4;  // 3 MB averaged every 4 steps: 4.56 ms / 4
  CHECK(predict_step(three_layers(), averaging, 4).step_s == doctest::Approx(13.960032e-3));

  ScalingOptions global = options();
  global.global_batch_size = 128;  // 2 ranks: 64 samples each, twice the compute
  const ScalingPoint two = predict_step(three_layers(), global, 2);
  CHECK(two.batch_per_rank == 64);
  CHECK(two.compute_s == doctest::Approx(2 * 12.5e-3 + 0.3e-3));

  ScalingOptions shared = options();
  shared.shared_cores = 2;  // 4 or 3 one-thread ranks on 2 cores: a core runs 2, twice as long
  CHECK(predict_step(three_layers(), shared, 4).compute_s == doctest::Approx(2 * 12.5e-3 + 0.3e-3));
  CHECK(predict_step(three_layers(), shared, 3).compute_s == doctest::Approx(2 * 12.5e-3 + 0.3e-3));
  CHECK(predict_step(three_layers(), shared, 2).compute_s == doctest::Approx(12.5e-3 + 0.3e-3));
}

TEST_CASE("a simulated network makes collectives last as long as the network would") {
  SimulatedNetwork net(std::make_shared<TwoRanks>(), NetworkModel{2000, 8});  // 2 ms latency
  std::vector<float> data(250000);  // 1 MB: 2 ms + 1 ms over the tree
  CHECK(seconds_of([&] { net.allreduce_sum(data.data(), data.size(), DType::float32, "x"); }) >=
        3e-3);
  // Two non-blocking allreduces share the link: the second completes after both, 6 ms.
  const auto t0 = std::chrono::steady_clock::now();
  auto a = net.iallreduce_sum(data.data(), data.size(), DType::float32, "a");
  auto b = net.iallreduce_sum(data.data(), data.size(), DType::float32, "b");
  CHECK_FALSE(b->test());
  a->wait();
  b->wait();
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= 6e-3);
  CHECK(b->test());
  CHECK(net.describe() == "two ranks, simulated network: 2000 us latency, 8 Gb/s");
}
