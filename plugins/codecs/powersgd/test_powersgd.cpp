// The powersgd codec beyond its conformance: the payload's size, a low-rank sum recovered exactly
// on three ranks, error feedback delivering a full-rank gradient over the steps, zeros staying
// zeros, and its parameter checked.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/coded_allreduce.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/testing/thread_group.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

std::shared_ptr<Codec> powersgd(std::int64_t rank) {
  return test::plugins().create_as<Codec>(
      "codec", "powersgd", Params(nlohmann::json{{"rank", rank}}, "exp.json: parallel.codec"));
}

double norm(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("powersgd: (rows + cols) r floats a bucket, small buckets as they are") {
  const auto codec = powersgd(4);
  CHECK(codec->combination() == Codec::Combination::reduce);
  CHECK_FALSE(codec->carries_weights());
  CHECK(codec->payload_bytes(10000) == 4 * (100 + 100) * 4);  // 100 x 100, against 40,000 bytes
  CHECK(codec->payload_bytes(10001) == 4 * (100 + 101) * 4);  // 101 x 101 with zeros after
  CHECK(codec->payload_bytes(40) == 4 * 40);                  // 6 x 7: (6 + 7) 4 >= 40: plain
  CHECK(test::error_of([] { powersgd(0); }) ==
        "exp.json: parallel.codec.rank: expected a positive integer, got 0");
}

TEST_CASE("powersgd: three ranks' rank-2 sum comes back whole, the same bits on every rank") {
  // Rank i holds a_i b^T + c_i d^T (50 x 60 as 3000 values): the sum has rank 2.
  constexpr std::int64_t rows = 55, cols = 55;  // 3025 values: ceil(sqrt) = 55
  const std::size_t n = rows * cols;
  std::vector<std::vector<float>> held(3), got(3);
  std::vector<double> exact(n, 0.0);
  for (int r = 0; r < 3; ++r) {
    held[r].resize(n);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const double v = std::sin(0.3 * i + r) * std::cos(0.2 * j) +
                         (r + 1) * 0.5 * std::cos(0.7 * i) * std::sin(0.1 * j + 1);
        held[r][static_cast<std::size_t>(i * cols + j)] = static_cast<float>(v);
        exact[static_cast<std::size_t>(i * cols + j)] += static_cast<float>(v);
      }
  }
  testing::ThreadGroup group(3);
  group.run([&](Communicator& comm, int r) {
    const auto codec = powersgd(2);
    CodedAllreduce sum(*codec, comm);
    std::vector<float> v = held[static_cast<std::size_t>(r)];
    // The first step starts from the seeded factor, the second from the first's: both whole.
    sum.sum(v, "test", /*error_feedback=*/false);
    v = held[static_cast<std::size_t>(r)];
    CHECK(sum.sum(v, "test", false) == 4 * (55 + 55) * 2);
    got[static_cast<std::size_t>(r)] = v;
  });
  std::vector<double> error(n);
  for (std::size_t i = 0; i < n; ++i) error[i] = got[0][i] - exact[i];
  CHECK(norm(error) <= 1e-5 * norm(exact));
  CHECK(got[1] == got[0]);
  CHECK(got[2] == got[0]);
}

TEST_CASE("powersgd: with error feedback a full-rank gradient arrives over the steps") {
  // A 20 x 20 gradient of full rank, sent again and again at rank 2: each step carries two of its
  // directions, the residual the rest, so the mean of what was sent tends to the gradient.
  const auto codec = powersgd(2);
  LocalCommunicator local;
  CodedAllreduce exchange(*codec, local);
  const std::size_t n = 400;
  std::vector<double> g(n), sent(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) g[i] = std::sin(1.7 * double(i)) + 0.1 * double(i % 7);
  constexpr int kSteps = 200;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<float> v(g.begin(), g.end());
    exchange.sum(v, "test", /*error_feedback=*/true);
    for (std::size_t i = 0; i < n; ++i) sent[i] += v[i];
  }
  std::vector<double> off(n);
  for (std::size_t i = 0; i < n; ++i) off[i] = sent[i] / kSteps - g[i];
  CHECK(norm(off) <= 0.05 * norm(g));
  // Without error feedback the same steps keep missing most of it.
  std::vector<float> once(g.begin(), g.end());
  CodedAllreduce plain(*codec, local);
  plain.sum(once, "test", false);
  for (std::size_t i = 0; i < n; ++i) off[i] = once[i] - g[i];
  CHECK(norm(off) >= 0.2 * norm(g));
}

TEST_CASE("powersgd: a bucket of zeros sums to zeros, no NaN from the orthonormalisation") {
  const auto codec = powersgd(4);
  LocalCommunicator local;
  CodedAllreduce exchange(*codec, local);
  std::vector<float> zeros(1000, 0.0f);
  exchange.sum(zeros, "test", true);
  for (float v : zeros) CHECK(v == 0.0f);
}

TEST_CASE("powersgd: a bucket's tensors as their own matrices, the gaps zeros, a bias as it is") {
  // Filters 10 x 12 of rank 1 at 0, padding to 128, a bias of 5 at 128 (too small to gain).
  const auto codec = powersgd(2);
  std::vector<float> bucket(133, 7.0f);  // 7: the padding, which must come back as zeros
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 12; ++j)
      bucket[static_cast<std::size_t>(i * 12 + j)] = (i + 1) * (0.5f - j);
  for (int k = 0; k < 5; ++k) bucket[128 + static_cast<std::size_t>(k)] = 0.25f * k - 1;
  const std::vector<float> held = bucket;
  const std::vector<BucketMatrix> matrices = {{0, 10, 12}, {128, 1, 5}};
  LocalCommunicator local;
  std::vector<float> state;
  CHECK(codec->reduce(local, bucket, matrices, state, "test", {}) == 4 * ((10 + 12) * 2 + 5));
  CHECK(state.size() == 12 * 2);  // the filters' Q, for the next step
  for (std::size_t i = 0; i < 120; ++i) CHECK(bucket[i] == doctest::Approx(held[i]).epsilon(1e-5));
  for (std::size_t i = 120; i < 128; ++i) CHECK(bucket[i] == 0.0f);
  for (std::size_t i = 128; i < 133; ++i) CHECK(bucket[i] == held[i]);
}
