// The secagg codec beyond its conformance (which checks the masked sum on three ranks bit for bit):
// what a rank sends hides its values, the masks are new every round, values it cannot carry turn
// the sum into NaN with the ranks named, a public key that would weaken the masks is refused,
// through a real transport in clear a relay reads nothing of any rank's values, and when a rank
// leaves a federated run the others' sums stay exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/coded_allreduce.hpp"
#include "dtnn/testing/loopback.hpp"
#include "dtnn/testing/thread_group.hpp"
#include "test_support.hpp"
#include "wire_testing.hpp"

using namespace dtnn;
using dtnn::testing::ThreadGroup;

namespace {

std::shared_ptr<Codec> secagg(int fraction_bits = 32) {
  return test::plugins().create_as<Codec>(
      "codec", "secagg",
      Params(nlohmann::json{{"fraction_bits", fraction_bits}}, "exp.json: parallel.codec"));
}

bool contains(const std::vector<unsigned char>& haystack, const void* needle, std::size_t bytes) {
  const auto* n = static_cast<const unsigned char*>(needle);
  return std::search(haystack.begin(), haystack.end(), n, n + bytes) != haystack.end();
}

}  // namespace

TEST_CASE(
    "secagg: a rank's payload hides its values, new masks every round, and the sum is exact") {
  constexpr int kRanks = 3;
  constexpr std::size_t kValues = 1000;
  const float known = 0.123456789f;  // every value of rank 1
  ThreadGroup group(kRanks);
  std::vector<std::vector<unsigned char>> plain(kRanks), round0(kRanks), round1(kRanks);
  std::vector<std::vector<float>> sums(kRanks);
  group.run([&](Communicator& comm, int r) {
    const auto codec = secagg();
    codec->join(comm);
    std::vector<float> x(kValues);
    for (std::size_t i = 0; i < kValues; ++i)
      x[i] = r == 1 ? known : static_cast<float>(r + 1) * 0.001f * static_cast<float>(i);
    const std::size_t bytes = codec->payload_bytes(kValues);
    auto& p = plain[static_cast<std::size_t>(r)];
    p.resize(bytes);
    codec->encode(x, p);
    round0[static_cast<std::size_t>(r)] = p;
    round1[static_cast<std::size_t>(r)] = p;
    codec->mask(round0[static_cast<std::size_t>(r)], 0);
    codec->mask(round1[static_cast<std::size_t>(r)], 1);
    CodedAllreduce sum(*codec, comm);
    sum.sum(x, "test", /*error_feedback=*/false);
    sums[static_cast<std::size_t>(r)] = x;
  });

  // Rank 1's value, as float32 bits and as its fixed-point word, is in its plain payload and in
  // neither masked one; no masked word equals its plain word; a round's masks differ from
  // another's.
  const auto word = static_cast<std::uint64_t>(std::llround(static_cast<double>(known) * 0x1p32));
  CHECK(contains(plain[1], &word, 8));
  for (int r = 0; r < kRanks; ++r) {
    CAPTURE(r);
    const auto& p = plain[static_cast<std::size_t>(r)];
    const auto& m0 = round0[static_cast<std::size_t>(r)];
    const auto& m1 = round1[static_cast<std::size_t>(r)];
    CHECK_FALSE(contains(m0, &word, 8));
    CHECK_FALSE(contains(m0, &known, 4));
    std::size_t same = 0, same_across_rounds = 0;
    for (std::size_t at = 0; at < p.size(); at += 8) {
      same += std::memcmp(p.data() + at, m0.data() + at, 8) == 0;
      same_across_rounds += std::memcmp(m0.data() + at, m1.data() + at, 8) == 0;
    }
    CHECK(same == 0);
    CHECK(same_across_rounds == 0);
  }

  // The masked payloads add up, modulo 2^64, to the plain ones' sum; every rank decodes it alike,
  // and it is the values' sum to the fixed point's resolution.
  for (std::size_t at = 0; at < plain[0].size(); at += 8) {
    std::uint64_t p_sum = 0, m_sum = 0;
    for (int r = 0; r < kRanks; ++r) {
      std::uint64_t a, b;
      std::memcpy(&a, plain[static_cast<std::size_t>(r)].data() + at, 8);
      std::memcpy(&b, round1[static_cast<std::size_t>(r)].data() + at, 8);
      p_sum += a;
      m_sum += b;
    }
    REQUIRE(p_sum == m_sum);
  }
  for (int r = 1; r < kRanks; ++r)
    CHECK(std::memcmp(sums[0].data(), sums[static_cast<std::size_t>(r)].data(),
                      kValues * sizeof(float)) == 0);
  for (std::size_t i = 0; i < kValues; ++i)
    REQUIRE(sums[0][i] == doctest::Approx(known + 0.004 * static_cast<double>(i)).epsilon(1e-6));
}

TEST_CASE("secagg: a value it cannot carry makes the sum NaN, and rank 0 names the rank") {
  // fraction_bits 48 on 3 ranks: magnitudes up to 2^14 / 3 = 5461.33.
  for (const float bad : {std::nanf(""), INFINITY, 6000.0f}) {
    CAPTURE(bad);
    ThreadGroup group(3);
    std::vector<std::vector<float>> sums(3);
    test::StderrCapture captured;
    group.run([&](Communicator& comm, int r) {
      const auto codec = secagg(48);
      codec->join(comm);
      std::vector<float> x(5, 1.0f);
      if (r == 2) x[3] = bad;
      CodedAllreduce sum(*codec, comm);
      sum.sum(x, "test", false);
      sums[static_cast<std::size_t>(r)] = x;
    });
    const std::string said = captured.text();
    for (const auto& s : sums)
      for (float v : s) CHECK(std::isnan(v));
    CHECK(said.find("secagg: 1 values from rank(s) 2 are not finite or beyond +-5461.33") !=
          std::string::npos);
  }
  ThreadGroup group(3);
  std::vector<float> in_range;
  group.run([&](Communicator& comm, int r) {
    const auto codec = secagg(48);
    codec->join(comm);
    std::vector<float> x(2, 5461.0f);
    CodedAllreduce(*codec, comm).sum(x, "test", false);
    if (r == 0) in_range = x;
  });
  CHECK(in_range == std::vector<float>{16383.0f, 16383.0f});
  CHECK(test::error_of([] { secagg(8); }) ==
        "exp.json: parallel.codec.fraction_bits: expected an integer from 16 to 48 (the fixed "
        "point's fraction bits), got 8");
}

TEST_CASE("secagg: a public key that would weaken the masks is refused, naming the rank") {
  // Ranks 1 and 2 are not secagg: they send chosen 32-byte keys where the real ranks send theirs.
  auto run = [](const std::array<unsigned char, 32>& key1,
                const std::array<unsigned char, 32>& key2) {
    ThreadGroup group(3);
    std::string error;
    try {
      group.run([&](Communicator& comm, int r) {
        if (r == 0) return secagg()->join(comm);
        std::vector<unsigned char> all(3 * 32);
        comm.allgather(r == 1 ? key1.data() : key2.data(), all.data(), 8, DType::float32, "keys");
      });
    } catch (const std::exception& e) {
      error = e.what();
    }
    return error;
  };
  std::array<unsigned char, 32> low_order{}, base_point{};  // 0: a point of small order
  base_point[0] = 9;                                        // X25519's base point: a valid key
  CHECK(run(base_point, low_order) ==
        "secagg: rank 2's public key gives no shared secret (a low-order point, which would make "
        "the pair's key known to all: a faulty peer, or a relay that alters keys)");
  CHECK(run(base_point, base_point) ==
        "secagg: rank 2's public key is rank 1's too (a relay that substitutes keys?); the pair's "
        "key would not be secret");
  CHECK(run(base_point, [] {
          std::array<unsigned char, 32> other{};
          other[0] = 10;
          return other;
        }()) == "");
}

TEST_CASE(
    "secagg: through tcp in clear, a relay between rank 1 and rank 0 reads nothing of its values") {
  // Three tcp ranks without TLS, rank 1 dialling rank 0 through a relay that keeps what rank 1
  // sends: a plain sum puts rank 1's values on the wire (the control); a secagg sum puts neither
  // its values nor their fixed-point words there, and every rank gets the sum.
  constexpr std::size_t kValues = 256;
  auto values_of = [](int r) {
    std::vector<float> x(kValues);
    for (std::size_t i = 0; i < kValues; ++i)
      x[i] = 1234.5678f * static_cast<float>(r + 1) + static_cast<float>(i);
    return x;
  };
  for (const bool masked : {false, true}) {
    CAPTURE(masked);
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
          comm->set_timeout(20);
          std::vector<float> x = values_of(r);
          if (masked) {
            const auto codec = secagg();
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
    bool read = contains(seen, x.data() + 16, 64);
    for (std::size_t i = 0; i < kValues; ++i) {
      const auto word =
          static_cast<std::uint64_t>(std::llround(static_cast<double>(x[i]) * 0x1p32));
      read = read || contains(seen, &word, 8);
    }
    CHECK(read == !masked);
    for (std::size_t i = 0; i < kValues; ++i)
      CHECK(sums[2][i] == doctest::Approx(6 * 1234.5678 + 3.0 * static_cast<double>(i)));
  }
}

TEST_CASE(
    "codecs over tcp when ranks may leave: a rank that left is left out of the sum, secagg's "
    "masks of its pairs removed, bit for bit") {
  // Four tcp ranks sum through a codec; rank 3 closes its connection; the three others sum twice
  // more. Values are multiples of 2^-10, which fp16 and secagg's fixed point carry exactly, so each
  // sum must equal the sum of the present ranks' values exactly; ckks's ciphertexts (where it is
  // built) within its bound.
  constexpr int kRanks = 4;
  constexpr std::size_t kValues = 300;
  auto values_of = [](int r, int round) {
    std::vector<float> x(kValues);
    for (std::size_t i = 0; i < kValues; ++i)
      x[i] = static_cast<float>((static_cast<int>(i) % 64) * (r + 1) - 17 * round) / 1024.0f;
    return x;
  };
  struct Case {
    std::string name;
    nlohmann::json params;
    double tolerance;
  };
  std::vector<Case> cases = {{"secagg", nlohmann::json::object(), 0.0},
                             {"fp16", nlohmann::json::object(), 0.0}};
#if DTNN_HAVE_CKKS  // slots 12, scale 40: each value within 2^-25 (test_ckks.cpp), 4 of them
  cases.push_back({"ckks", {{"slots", 12}, {"scale", 40}}, 4 * 0x1p-25});
#endif
  for (const Case& spec : cases) {
    const std::string& name = spec.name;
    CAPTURE(name);
    const int port = dtnn::testing::free_loopback_port();
    std::vector<std::shared_ptr<Communicator>> comms(kRanks);
    std::vector<std::shared_ptr<Codec>> codecs(kRanks);
    std::vector<std::unique_ptr<CodedAllreduce>> sums(kRanks);
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] {
        const nlohmann::json p = {{"rank", r},
                                  {"world_size", kRanks},
                                  {"server", "127.0.0.1:" + std::to_string(port)},
                                  {"connect_timeout_s", 20}};
        comms[static_cast<std::size_t>(r)] = test::plugins().create_as<Communicator>(
            "communicator", "tcp", Params(p, "test: parallel.communicator"));
      });
    for (auto& t : threads) t.join();
    std::vector<std::vector<std::vector<float>>> got(kRanks);
    auto sum_round = [&](int r, Communicator&, int round) {
      std::vector<float> x = values_of(r, round);
      sums[static_cast<std::size_t>(r)]->sum(x, "round " + std::to_string(round), false);
      got[static_cast<std::size_t>(r)].push_back(x);
    };
    test::on_every_rank(comms, [&](int r, Communicator& c) {
      REQUIRE(c.let_ranks_leave());
      c.set_timeout(20);
      const auto u = static_cast<std::size_t>(r);
      codecs[u] = test::plugins().create_as<Codec>("codec", name, Params(spec.params, "test"));
      REQUIRE(codecs[u]->survives_departures());
      codecs[u]->join(c);
      sums[u] = std::make_unique<CodedAllreduce>(*codecs[u], c);
      sums[u]->let_ranks_leave();
      sum_round(r, c, 0);
    });
    comms.pop_back();  // rank 3 leaves: its connection closes
    sums.pop_back();
    codecs.pop_back();
    test::on_every_rank(comms, [&](int r, Communicator& c) {
      sum_round(r, c, 1);
      CHECK(sums[static_cast<std::size_t>(r)]->absent() == std::vector<int>{3});
      sum_round(r, c, 2);
    });
    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      const int present = round == 0 ? kRanks : kRanks - 1;
      std::vector<float> want(kValues, 0.0f);
      for (int r = 0; r < present; ++r) {
        const std::vector<float> x = values_of(r, round);
        for (std::size_t i = 0; i < kValues; ++i) want[i] += x[i];
      }
      for (int r = 0; r < kRanks - 1; ++r) {
        CAPTURE(r);
        REQUIRE(got[static_cast<std::size_t>(r)].size() == 3);
        const auto& sum = got[static_cast<std::size_t>(r)][static_cast<std::size_t>(round)];
        if (spec.tolerance == 0) {
          CHECK(sum == want);
          continue;
        }
        double worst = 0;
        for (std::size_t i = 0; i < kValues; ++i)
          worst = std::max(worst, std::abs(double(sum[i]) - double(want[i])));
        CHECK(worst <= spec.tolerance);
      }
    }
  }
}
