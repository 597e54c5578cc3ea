// The ckks codec beyond its conformance (which sums on three ranks and checks the round trip's
// bound): the key goes from rank 0 to the others sealed and all hold the same sum, a payload
// carries no value in clear and differs every time, values it cannot carry turn the sum into NaN
// with the rank named, ranks with different key files are named, bad parameters and bad key files
// get one clear error, and through a real transport in clear a relay reads nothing of any rank's
// values. Built where the plugin is (pybind11 and OpenSSL found); Python's tenseal must be
// installed (scripts/install-deps.sh).
#if DTNN_HAVE_CKKS
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/coded_allreduce.hpp"
#include "dtnn/gradient_exchange.hpp"
#include "dtnn/model.hpp"
#include "dtnn/testing/loopback.hpp"
#include "dtnn/testing/thread_group.hpp"
#include "test_support.hpp"
#include "wire_testing.hpp"

using namespace dtnn;
using dtnn::testing::ThreadGroup;

namespace {

// slots 12, scale 40: degree 8192, 4096 values per ciphertext; a value is off by at most
// 4 x 8192 x 2^-40 = 2^-25 (the codec's bound).
constexpr double kValueError = 0x1p-25;

std::shared_ptr<Codec> ckks(const nlohmann::json& params = nlohmann::json::object()) {
  nlohmann::json p = {{"slots", 12}, {"scale", 40}};
  p.update(params);
  return test::plugins().create_as<Codec>("codec", "ckks", Params(p, "exp.json: parallel.codec"));
}

bool contains(const std::vector<unsigned char>& haystack, const void* needle, std::size_t bytes) {
  const auto* n = static_cast<const unsigned char*>(needle);
  return std::search(haystack.begin(), haystack.end(), n, n + bytes) != haystack.end();
}

// A key file made by scripts/make-ckks-key.py, as a user makes one.
std::filesystem::path make_key(const std::string& name) {
  const auto dir = test::temp_dir("ckks_keys");
  const auto file = dir / name;
  std::filesystem::remove(file);
  const std::string command = std::string(DTNN_TEST_PYTHON) + " " + DTNN_TEST_SOURCE_DIR +
                              "/scripts/make-ckks-key.py " + file.string() +
                              " --slots 12 --scale 40 > /dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  return file;
}

}  // namespace

TEST_CASE("ckks: three ranks hold the same sum of their ciphertexts, the key sent sealed") {
  constexpr int kRanks = 3;
  constexpr std::size_t kValues = 5000;  // two ciphertexts
  const float known = 0.123456789f;      // every value of rank 1
  auto values_of = [&](int r) {
    std::vector<float> x(kValues);
    for (std::size_t i = 0; i < kValues; ++i)
      x[i] = r == 1 ? known : static_cast<float>(r + 1) * 0.001f * static_cast<float>(i % 977);
    return x;
  };
  ThreadGroup group(kRanks);
  std::vector<std::vector<unsigned char>> first(kRanks), second(kRanks);
  std::vector<std::vector<float>> sums(kRanks);
  group.run([&](Communicator& comm, int r) {
    const auto codec = ckks();
    codec->join(comm);  // rank 0 makes the key; 1 and 2 receive it sealed
    std::vector<float> x = values_of(r);
    const std::size_t bytes = codec->payload_bytes(kValues);
    auto& p = first[static_cast<std::size_t>(r)];
    auto& q = second[static_cast<std::size_t>(r)];
    p.resize(bytes);
    q.resize(bytes);
    codec->encode(x, p);
    codec->encode(x, q);
    CodedAllreduce(*codec, comm).sum(x, "test", /*error_feedback=*/false);
    sums[static_cast<std::size_t>(r)] = x;
  });
  // No value of rank 1 is in its payloads, as float32 or as double, and the two encodings of the
  // same values share no 8-byte word past the block headers.
  const double known_double = known;
  for (const auto* p : {&first[1], &second[1]}) {
    CHECK_FALSE(contains(*p, &known, 4));
    CHECK_FALSE(contains(*p, &known_double, 8));
  }
  CHECK(first[1] != second[1]);
  // Every rank holds the same bits, the values' sum to CKKS's precision.
  for (int r = 1; r < kRanks; ++r) CHECK(sums[static_cast<std::size_t>(r)] == sums[0]);
  const std::vector<float> a = values_of(0), c = values_of(2);
  double worst = 0;
  for (std::size_t i = 0; i < kValues; ++i)
    worst = std::max(worst, std::abs(static_cast<double>(sums[0][i]) -
                                     (static_cast<double>(a[i]) + known + c[i])));
  CHECK(worst <= kRanks * kValueError + 1e-6);  // float32's rounding of sums near 10
  MESSAGE("ckks: largest error of a three-rank sum " << worst);
}

TEST_CASE("ckks: a value it cannot carry makes the sum NaN, and rank 0 names the rank") {
  // scale 40 in a 60-bit prime on 3 ranks: magnitudes up to 2^12 / 3 = 1365.33.
  for (const float bad : {std::nanf(""), INFINITY, 1400.0f}) {
    CAPTURE(bad);
    ThreadGroup group(3);
    std::vector<std::vector<float>> sums(3);
    test::StderrCapture captured;
    group.run([&](Communicator& comm, int r) {
      const auto codec = ckks();
      codec->join(comm);
      std::vector<float> x(5, 1.0f);
      if (r == 2) x[3] = bad;
      CodedAllreduce sum(*codec, comm);
      sum.sum(x, "test", false);
      sums[static_cast<std::size_t>(r)] = x;
    });
    for (const auto& s : sums)
      for (float v : s) CHECK(std::isnan(v));
    CHECK(captured.text().find("ckks: rank(s) 2 had values that are not finite or beyond "
                               "+-1365.33") != std::string::npos);
  }
}

TEST_CASE("ckks: ranks given key files hold its key, and one with another key is named") {
  const auto key = make_key("a.key"), other = make_key("b.key");
  for (const bool same : {true, false}) {
    CAPTURE(same);
    ThreadGroup group(3);
    std::vector<std::vector<float>> sums(3);
    std::string error;
    try {
      group.run([&](Communicator& comm, int r) {
        const auto codec = ckks({{"key_file", (r == 2 && !same ? other : key).string()}});
        codec->join(comm);
        std::vector<float> x(3, static_cast<float>(r + 1));
        CodedAllreduce(*codec, comm).sum(x, "test", false);
        sums[static_cast<std::size_t>(r)] = x;
      });
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (same) {
      REQUIRE(error == "");
      for (float v : sums[1]) CHECK(v == doctest::Approx(6.0).epsilon(1e-6));
    } else {
      CHECK(error.find("ckks: rank(s) 2 hold another key than rank 0") != std::string::npos);
    }
  }
  // Not a key; a missing file.
  const auto junk = test::temp_dir("ckks_keys") / "junk.key";
  std::ofstream(junk) << "not a key";
  const std::string bad = test::error_of([&] { ckks({{"key_file", junk.string()}}); });
  CHECK(bad.rfind(junk.string() + ": not a TenSEAL CKKS key with its secret key (", 0) == 0);
  const std::string missing = test::error_of([] { ckks({{"key_file", "/nonexistent/k.key"}}); });
  CHECK(missing.find("exp.json: parallel.codec.key_file: expected a TenSEAL CKKS key; ") == 0);
  CHECK(missing.find("/nonexistent/k.key") != std::string::npos);
}

TEST_CASE("ckks: parameters out of range, and a payload that lies about its length, are refused") {
  CHECK(test::error_of([] {
          ckks({{"security", 100}});
        }) == "exp.json: parallel.codec.security: expected 128, 192 or 256 (bits), got 100");
  CHECK(test::error_of([] {
          ckks({{"scale", 45}});
        }) ==
        "exp.json: parallel.codec.scale: expected an integer from 25 to 40 (values go as value x "
        "2^scale), got 45");
  CHECK(test::error_of([] {
          ckks({{"slots", 11}});
        }) ==
        "exp.json: parallel.codec.scale: expected at most 109 modulus bits for 128-bit security "
        "at degree 4096 (this key has 120): a smaller scale, more slots, or less security, got "
        "40");
  CHECK(test::error_of([] {
          ckks({{"slots", 12}, {"security", 256}});
        }) ==
        "exp.json: parallel.codec.scale: expected at most 118 modulus bits for 256-bit security "
        "at degree 8192 (this key has 120): a smaller scale, more slots, or less security, got "
        "40");
  CHECK(test::error_of([] { ckks({{"slots", 12}, {"scale", 38}, {"security", 256}}); }) == "");

  const auto codec = ckks();
  LocalCommunicator alone;
  codec->join(alone);
  std::vector<float> x(10, 1.0f), out(10, 0.0f);
  std::vector<unsigned char> p(codec->payload_bytes(x.size()));
  codec->encode(x, p);
  const std::uint64_t lie = p.size();
  std::memcpy(p.data() + 8, &lie, 8);
  CHECK(test::error_of([&] {
          codec->decode_add(p, out, 1.0f);
        }).find("ckks: a payload's ciphertext 0 says it has") == 0);
  std::vector<unsigned char> garbage(p.size(), 0x5A);
  const std::uint64_t length = 1000;
  std::memcpy(garbage.data(), "\0\0\0\0\0\0\0\0", 8);
  std::memcpy(garbage.data() + 8, &length, 8);
  CHECK(test::error_of([&] {
          codec->decode_add(garbage, out, 1.0f);
        }).find("ckks: decrypting (a ciphertext of this run's key?): ") == 0);
}

TEST_CASE(
    "ckks: through tcp in clear, a relay between rank 1 and rank 0 reads nothing of its values") {
  // As secagg's test: the plain sum is the control, putting rank 1's values on the wire.
  constexpr std::size_t kValues = 256;
  auto values_of = [](int r) {
    std::vector<float> x(kValues);
    for (std::size_t i = 0; i < kValues; ++i)
      x[i] = 123.5678f * static_cast<float>(r + 1) + static_cast<float>(i);
    return x;
  };
  for (const bool encrypted : {false, true}) {
    CAPTURE(encrypted);
    const int rank0_port = dtnn::testing::free_loopback_port(),
              relay_port = dtnn::testing::free_loopback_port();
    test::Relay relay(relay_port, rank0_port);
    std::vector<std::vector<float>> sums(3);
    std::vector<std::thread> threads;
    std::string errors[3];
    for (int r = 0; r < 3; ++r)
      threads.emplace_back([&, r] {
        errors[r] = test::error_of([&] {
          const nlohmann::json p = {
              {"rank", r},
              {"world_size", 3},
              {"server", "127.0.0.1:" + std::to_string(r == 1 ? relay_port : rank0_port)},
              {"connect_timeout_s", 20}};
          const auto comm = test::plugins().create_as<Communicator>(
              "communicator", "tcp", Params(p, "test: parallel.communicator"));
          comm->set_timeout(60);
          std::vector<float> x = values_of(r);
          if (encrypted) {
            const auto codec = ckks();
            codec->join(*comm);
            CodedAllreduce(*codec, *comm).sum(x, "secret", false);
          } else {
            comm->allreduce_sum(x.data(), x.size(), DType::float32, "secret");
          }
          sums[static_cast<std::size_t>(r)] = x;
        });
      });
    for (auto& t : threads) t.join();
    for (const auto& e : errors) REQUIRE(e == "");
    const std::string wire = relay.sent();
    const std::vector<unsigned char> seen(wire.begin(), wire.end());
    REQUIRE(seen.size() > kValues * 4);
    const std::vector<float> x = values_of(1);
    bool read = false;
    for (std::size_t i = 0; i + 4 <= kValues; i += 4) read = read || contains(seen, &x[i], 16);
    CHECK(read == !encrypted);
    for (std::size_t i = 0; i < kValues; ++i)
      CHECK(sums[2][i] == doctest::Approx(6 * 123.5678 + 3.0 * static_cast<double>(i)));
  }
}
TEST_CASE("ckks: averaging weights forty times keeps them: the gaps between parameters stay zero") {
  // The exchange aligns each parameter to 64 bytes; the gaps between them are summed too. An
  // exact sum keeps them zero, but CKKS's noise would be summed again at every average, times
  // the ranks: 4^40 x 1e-8 would flood the weights, had the exchange not zeroed the gaps.
  constexpr int kRanks = 4;
  ThreadGroup group(kRanks);
  std::vector<std::vector<float>> weights(kRanks);
  group.run([&](Communicator& comm, int r) {
    ModelOptions o;
    o.max_batch = 1;
    Model model(parse_model_spec(
                    nlohmann::json::parse(R"({"layers": [{"type": "fc", "units": 2}]})"), "tiny"),
                o, Shape{3}, test::plugins());
    for (const auto& p : model.parameters())
      std::fill(p.value.data<float>(), p.value.data<float>() + p.value.numel(), 0.5f);
    const auto codec = ckks();
    codec->join(comm);
    ExchangeOptions options;
    options.codec = codec.get();
    GradientExchange exchange(model, comm, options);
    for (int sync = 0; sync < 40; ++sync) exchange.average_weights(1.0 / kRanks);
    for (const auto& p : model.parameters())
      weights[static_cast<std::size_t>(r)].insert(weights[static_cast<std::size_t>(r)].end(),
                                                  p.value.data<float>(),
                                                  p.value.data<float>() + p.value.numel());
  });
  for (const auto& w : weights)
    for (float v : w) REQUIRE(v == doctest::Approx(0.5).epsilon(1e-5));
}
#endif  // DTNN_HAVE_CKKS
