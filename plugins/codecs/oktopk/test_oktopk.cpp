// The oktopk codec beyond its conformance: Ok-Topk's sum against the definition computed here
// (the global top-k of the sum of each rank's top-k), thresholds kept between re-estimations
// (tau_prime), regions re-balanced to where the values are (tau), error feedback keeping exactly
// what the sum did not take, the all-to-all under it, and a peer's index outside its region
// refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/coded_allreduce.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/testing/thread_group.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

std::shared_ptr<Codec> oktopk(const nlohmann::json& params) {
  return test::plugins().create_as<Codec>("codec", "oktopk",
                                          Params(params, "exp.json: parallel.codec"));
}

// Rank r's n distinct values, seeded.
std::vector<float> values(std::size_t n, int r) {
  std::mt19937 rng(static_cast<unsigned>(11 + r));
  std::normal_distribution<float> normal;
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

// x with all but its k largest magnitudes set to 0.
std::vector<float> top(std::vector<float> x, std::size_t k) {
  std::vector<float> m(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) m[i] = std::abs(x[i]);
  std::nth_element(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(k - 1), m.end(),
                   std::greater<float>());
  for (float& v : x)
    if (std::abs(v) < m[k - 1]) v = 0.0f;
  return x;
}

std::size_t nonzeros(const std::vector<float>& x) {
  return static_cast<std::size_t>(std::count_if(x.begin(), x.end(), [](float v) { return v; }));
}

}  // namespace

TEST_CASE("oktopk: the global top-k of the sum of each rank's top-k, the same on every rank") {
  constexpr std::size_t n = 2000, k = 40;  // density 0.02
  std::vector<float> expected(n, 0.0f);
  for (int r = 0; r < 3; ++r) {  // the ranks' selections, added in rank order as the owner adds
    const std::vector<float> t = top(values(n, r), k);
    for (std::size_t i = 0; i < n; ++i) expected[i] += t[i];
  }
  expected = top(expected, k);
  std::vector<std::vector<float>> got(3);
  testing::ThreadGroup group(3);
  group.run([&](Communicator& comm, int r) {
    const auto codec = oktopk({{"density", 0.02}});
    std::vector<float> x = values(n, r), state;
    codec->reduce(comm, x, {}, state, "test", {});
    got[static_cast<std::size_t>(r)] = x;
  });
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(std::memcmp(got[r].data(), expected.data(), n * sizeof(float)) == 0);
  }
  CHECK(nonzeros(expected) == k);
}

TEST_CASE("oktopk: thresholds are kept for tau_prime sums, then re-estimated") {
  // The second sum's values are ten times the first's: under the first sum's thresholds far more
  // than k pass; re-estimated (tau_prime 1), about k.
  constexpr std::size_t n = 3000;
  for (int tau_prime : {1, 4}) {
    CAPTURE(tau_prime);
    std::vector<std::size_t> taken(3);
    testing::ThreadGroup group(3);
    group.run([&](Communicator& comm, int r) {
      const auto codec = oktopk({{"density", 0.01}, {"tau_prime", tau_prime}});
      std::vector<float> state, x = values(n, r);
      codec->reduce(comm, x, {}, state, "first", {});
      x = values(n, r + 3);
      for (float& v : x) v *= 10.0f;
      codec->reduce(comm, x, {}, state, "second", {});
      taken[static_cast<std::size_t>(r)] = nonzeros(x);
    });
    CHECK(taken[0] == taken[2]);
    if (tau_prime == 1)
      CHECK(taken[0] == 30);
    else
      CHECK(taken[0] > 300);
  }
}

TEST_CASE("oktopk: every tau sums the regions move to where the ranks' values are") {
  // The largest values lie in the first fifth of the bucket: balanced regions end there.
  constexpr std::size_t n = 1000;
  std::vector<std::vector<float>> states(3);
  testing::ThreadGroup group(3);
  group.run([&](Communicator& comm, int r) {
    const auto codec = oktopk({{"density", 0.05}, {"tau", 2}});
    std::vector<float> x = values(n, r), state;
    for (std::size_t i = 0; i < n; ++i) x[i] *= i < n / 5 ? 100.0f : 1.0f;
    codec->reduce(comm, x, {}, state, "test", {});
    states[static_cast<std::size_t>(r)] = state;
  });
  // The state: step, the global threshold, the three regions' ends (raw uint32 bits), the
  // three ranks' local thresholds; the same on every rank.
  REQUIRE(states[0].size() == 8);
  std::uint32_t ends[3];
  std::memcpy(ends, &states[0][2], sizeof ends);
  CHECK(ends[0] < n / 5);
  CHECK(ends[0] < ends[1]);
  CHECK(ends[1] <= n / 5);
  CHECK(ends[2] == n);
  for (int r = 1; r < 3; ++r) CHECK(std::memcmp(states[r].data(), states[0].data(), 32) == 0);
}

TEST_CASE("oktopk: error feedback keeps what the sum did not take, and delivers it later") {
  // Through the exchange: a rank's residual is 0 where the sum took its value and the value
  // elsewhere; over steps of the same gradients every value arrives.
  constexpr std::size_t n = 500;  // k = 50
  constexpr int kSteps = 100;
  std::vector<std::vector<float>> residuals(3), first_sum(3);
  std::vector<double> delivered(n, 0.0);
  testing::ThreadGroup group(3);
  group.run([&](Communicator& comm, int r) {
    const auto codec = oktopk({{"density", 0.1}});
    CodedAllreduce exchange(*codec, comm);
    const std::vector<float> g = values(n, r);
    for (int step = 0; step < kSteps; ++step) {
      std::vector<float> x = g;
      exchange.sum(x, "test", /*error_feedback=*/true);
      if (step == 0) {
        first_sum[static_cast<std::size_t>(r)] = x;
        residuals[static_cast<std::size_t>(r)] = exchange.residuals().at(0);
      }
      if (r == 0)
        for (std::size_t i = 0; i < n; ++i) delivered[i] += x[i];
    }
  });
  const std::vector<float> g0 = values(n, 0);
  std::size_t took = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool kept = residuals[0][i] == 0.0f;
    CHECK((kept ? first_sum[0][i] != 0.0f : residuals[0][i] == g0[i]));
    took += kept;
  }
  CHECK(took > 0);
  CHECK(took <= 50);
  // 100 steps of the same three gradients: what arrived is about 100 times their sum (what the
  // ranks still hold back is a few steps' worth).
  double apart = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double sum = double(g0[i]) + values(n, 1)[i] + values(n, 2)[i];
    apart += (delivered[i] - kSteps * sum) * (delivered[i] - kSteps * sum);
    scale += kSteps * sum * kSteps * sum;
  }
  CHECK(apart < 0.05 * scale);
}

TEST_CASE("oktopk: the all-to-all delivers each rank's block to its rank") {
  testing::ThreadGroup group(3);
  std::vector<std::vector<double>> got(3);
  group.run([&](Communicator& comm, int r) {
    std::vector<double> send(6), recv(6);
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) send[static_cast<std::size_t>(2 * j + i)] = 100 * r + 10 * j + i;
    comm.alltoall(send.data(), recv.data(), 2, DType::float64, "test");
    got[static_cast<std::size_t>(r)] = recv;
  });
  for (int me = 0; me < 3; ++me)
    for (int from = 0; from < 3; ++from)
      for (int i = 0; i < 2; ++i)
        CHECK(got[me][static_cast<std::size_t>(2 * from + i)] == 100 * from + 10 * me + i);
}

namespace {

// Rank 0 of two whose peer claims, for the region exchange, to send one value of rank 0's region
// at an index beyond it.
class RoguePeer final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(void*, std::size_t, DType, std::string_view) override {}
  std::unique_ptr<CommRequest> iallreduce_sum(void*, std::size_t, DType,
                                              std::string_view) override {
    return nullptr;
  }
  void broadcast(void*, std::size_t, DType, int, std::string_view) override {}
  void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                 std::string_view) override {
    const std::size_t bytes = count * dtype_size(dtype);
    std::memcpy(recv, send, bytes);
    std::memcpy(static_cast<char*>(recv) + bytes, send, bytes);  // the peer counts as this rank
  }
  void alltoall(const void* send, void* recv, std::size_t count, DType dtype,
                std::string_view name) override {
    allgather(send, recv, count, dtype, name);
    const std::uint32_t beyond = 999;  // the peer's first pair: an index in rank 1's region
    std::memcpy(static_cast<char*>(recv) + count * dtype_size(dtype), &beyond, 4);
  }
  void barrier(std::string_view) override {}
  std::string describe() const override { return "rogue"; }
};

}  // namespace

TEST_CASE("oktopk: a peer's index outside the region it sends to is refused, naming the peer") {
  RoguePeer comm;
  const auto codec = oktopk({{"density", 0.5}});
  std::vector<float> x(1000, 0.0f), state;
  for (std::size_t i = 0; i < 10; ++i) x[i] = 1.0f + static_cast<float>(i);  // all in region 0
  const std::string error = test::error_of([&] { codec->reduce(comm, x, {}, state, "test", {}); });
  CHECK(error.find("oktopk: rank 1 sent index 999 to the region [0, ") == 0);
  CHECK(test::error_of([] {
          oktopk({{"tau_prime", 0}});
        }) ==
        "exp.json: parallel.codec.tau_prime: expected a positive number of sums between the "
        "thresholds' re-estimation, got 0");
}
