// The codec driver of plugin_conformance.hpp.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "dtnn/codec.hpp"
#include "dtnn/coded_allreduce.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/params.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "dtnn/testing/thread_group.hpp"

namespace dtnn::testing {

using nlohmann::json;

namespace {

// n values of mixed signs and magnitudes from 2^-10 to 1000 (fp16's normal range), seeded.
std::vector<float> values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> exponent(-10.0f, 9.9f), unit(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = (unit(rng) < 0.5f ? -1.0f : 1.0f) * std::exp2(exponent(rng));
  return x;
}

double squared_norm(std::span<const float> x) {
  double s = 0;
  for (float v : x) s += static_cast<double>(v) * v;
  return s;
}

// Three ranks (threads), each with a codec of its own joined to them, sum different values twice
// through CodedAllreduce: every rank must hold, bit for bit, what one codec computes alone from the
// three payloads (decoded in rank order, their words added and decoded once, or combined by the
// codec and decoded once), whatever masks the ranks added on the way. A randomised codec's
// payloads differ from the lone codec's, and a codec that sums over the ranks itself (reduce) has
// no payloads to fold: there the ranks must agree bit for bit with each other, and the sum be the
// values' sum within each rank's round-trip bound.
template <class Make>
Check three_rank_sum(const Make& make, const Codec& alone, std::size_t n,
                     const std::string& setting) {
  constexpr int kRanks = 3;
  const std::size_t bytes = alone.payload_bytes(n);
  const Codec::Combination combination = alone.combination();
  const bool lone = alone.deterministic() && combination != Codec::Combination::reduce;
  std::vector<std::vector<float>> x(kRanks), expected(2, std::vector<float>(n, 0.0f));
  std::vector<std::vector<double>> exact(2, std::vector<double>(n, 0.0));
  // Without the lone codec's sum: the sum's largest squared error, the round trips' bound plus
  // float32's rounding of the sum (a few ulps of the magnitudes added, per value).
  std::vector<double> allowed(2, 0.0);
  std::vector<std::vector<float>> got(kRanks * 2);
  for (int round = 0; round < 2; ++round) {
    std::vector<unsigned char> words(bytes, 0), p(bytes);
    double root = 0;
    std::vector<double> magnitude(n, 0.0);
    for (int r = 0; r < kRanks; ++r) {
      const std::vector<float> v = values(n, static_cast<unsigned>(7 * n + 3 * r + round));
      for (std::size_t i = 0; i < n; ++i) {
        exact[round][i] += v[i];
        magnitude[i] += std::abs(v[i]);
      }
      root += std::sqrt((1 - alone.contraction(n)) * squared_norm(v));
      if (!lone) continue;
      alone.encode(v, p);
      if (combination == Codec::Combination::decode_each) {
        alone.decode_add(p, expected[round], 1.0f);
      } else if (combination == Codec::Combination::combine) {
        if (r == 0)
          words = p;
        else
          alone.combine(words, p);
      } else {
        for (std::size_t at = 0; at + 8 <= bytes; at += 8) {
          std::uint64_t a, b;
          std::memcpy(&a, words.data() + at, 8);
          std::memcpy(&b, p.data() + at, 8);
          a += b;
          std::memcpy(words.data() + at, &a, 8);
        }
      }
    }
    allowed[round] = root * root;
    for (double m : magnitude) allowed[round] += std::pow(4 * FLT_EPSILON * m, 2);
    if (lone && combination != Codec::Combination::decode_each)
      alone.decode_add(words, expected[round], 1.0f);
  }
  std::string error;
  try {
    ThreadGroup group(kRanks);
    group.run([&](Communicator& comm, int r) {
      const auto codec = make();
      codec->join(comm);
      CodedAllreduce sum(*codec, comm);
      for (int round = 0; round < 2; ++round) {
        std::vector<float> v = values(n, static_cast<unsigned>(7 * n + 3 * r + round));
        sum.sum(v, "conformance, three ranks", /*error_feedback=*/false);
        got[static_cast<std::size_t>(2 * r + round)] = std::move(v);
      }
    });
  } catch (const std::exception& e) {
    error = e.what();
  }
  bool same = error.empty();
  std::string detail = error.empty() ? "two sums on three ranks" : error;
  for (int r = 0; same && r < kRanks; ++r)
    for (int round = 0; round < 2; ++round) {
      const auto& mine = got[static_cast<std::size_t>(2 * r + round)];
      const auto& reference = lone ? expected[static_cast<std::size_t>(round)] : got[round];
      same = same && std::memcmp(mine.data(), reference.data(), n * sizeof(float)) == 0;
    }
  if (same && !lone) {
    for (int round = 0; round < 2; ++round) {
      double lost = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double d = got[round][i] - exact[round][i];
        lost += d * d;
      }
      same = same && lost <= allowed[round] * (1 + 1e-6) + 1e-30;
      detail += ", round " + std::to_string(round) + " lost " + std::to_string(lost) +
                " (allowed " + std::to_string(allowed[round]) + ")";
    }
  }
  return {lone ? "three ranks hold the sum of their payloads, bit for bit, round after round"
               : "three ranks hold the same sum, bit for bit, within the round trips' bound",
          setting, true, same, detail};
}

}  // namespace

std::vector<Check> check_codec(const Registry& registry, const PluginRecord& record,
                               const std::string& case_json) {
  const json c = json::parse(case_json);
  const json params = c.value("params", json::object());
  auto make = [&] {
    return registry.create_as<Codec>("codec", record.name,
                                     Params(params, "conformance: " + record.name), {});
  };
  const auto codec = make(), twin = make();
  LocalCommunicator alone;
  codec->join(alone);
  twin->join(alone);
  std::vector<Check> out;
  for (std::size_t n : c.value("n", std::vector<std::size_t>{1, 7, 1000, 4099})) {
    const std::string setting = "params " + params.dump() + ", " + std::to_string(n) + " values";
    const std::size_t bytes = codec->payload_bytes(n);
    out.push_back({"the payload's size depends on n alone", setting, true,
                   bytes == twin->payload_bytes(n) && bytes == codec->payload_bytes(n),
                   std::to_string(bytes) + " bytes"});
    const std::vector<float> x = values(n, static_cast<unsigned>(n));
    std::vector<unsigned char> p(bytes + 1, 0xA5), q(bytes + 1, 0x5A);
    codec->encode(x, std::span(p).first(bytes));
    twin->encode(x, std::span(q).first(bytes));
    if (codec->deterministic()) {
      out.push_back({"encoding is a function of the values", setting, true,
                     std::memcmp(p.data(), q.data(), bytes) == 0 && p[bytes] == 0xA5,
                     "two encodings of the same values (and nothing written past the payload)"});
    } else {  // encryption: the same values must never give the same payload twice
      out.push_back({"a randomised encoding differs every time", setting, true,
                     std::memcmp(p.data(), q.data(), bytes) != 0 && p[bytes] == 0xA5,
                     "two encodings of the same values (and nothing written past the payload)"});
    }
    // The round trip keeps the codec's contraction: |x - d|^2 <= (1 - delta) |x|^2.
    std::vector<float> d(n, 0.0f);
    codec->decode_add(std::span(p).first(bytes), d, 1.0f);
    std::vector<float> diff(n);
    for (std::size_t i = 0; i < n; ++i) diff[i] = x[i] - d[i];
    const double lost = squared_norm(diff), bound = (1 - codec->contraction(n)) * squared_norm(x);
    out.push_back({"a round trip loses at most 1 - contraction of the squared norm", setting, true,
                   lost <= bound * (1 + 1e-6) + 1e-30,
                   "lost " + std::to_string(lost) + " of " + std::to_string(squared_norm(x)) +
                       ", bound " + std::to_string(bound)});
    // decode_add adds, scaled.
    std::vector<float> base(n), scaled(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i) base[i] = static_cast<float>(i % 5) - 2.0f;
    std::vector<float> added = base;
    codec->decode_add(std::span(p).first(bytes), added, 1.0f);
    codec->decode_add(std::span(p).first(bytes), scaled, -2.0f);
    bool adds = true;
    for (std::size_t i = 0; i < n; ++i)
      adds = adds && added[i] == base[i] + d[i] && scaled[i] == -2.0f * d[i];
    out.push_back({"decode_add adds scale x the decoded values", setting, true, adds, ""});

    // Error feedback through the exchange's CodedAllreduce on one rank: over the steps, what was
    // sent sums to the gradients less the last residual; residuals restored into a fresh
    // exchange continue bit for bit.
    LocalCommunicator local;
    CodedAllreduce a(*codec, local), b(*codec, local);
    std::vector<double> gradients(n, 0.0), sent(n, 0.0);
    for (unsigned step = 0; step < 12; ++step) {
      std::vector<float> g = values(n, 1000 + step);
      for (std::size_t i = 0; i < n; ++i) gradients[i] += g[i];
      a.sum(g, "conformance", /*error_feedback=*/true);
      for (std::size_t i = 0; i < n; ++i) sent[i] += g[i];
      if (step == 5) {
        b.set_residuals(a.residuals());
        b.set_codec_states(a.codec_states());
      }
      if (step > 5) {
        std::vector<float> h = values(n, 1000 + step);
        b.sum(h, "conformance", true);
        // A randomised codec's two exchanges differ by their encodings' errors, each within the
        // round trip's bound of what it carried (the step's values plus a residual).
        double apart = 0, allowed = 0;
        for (std::size_t i = 0; i < n; ++i) {
          apart += (static_cast<double>(h[i]) - g[i]) * (static_cast<double>(h[i]) - g[i]);
          allowed += 4 * (2 * static_cast<double>(g[i]) * g[i] + 1e-6);
        }
        allowed *= 1 - codec->contraction(n);
        const bool continues = codec->deterministic()
                                   ? std::memcmp(h.data(), g.data(), n * sizeof(float)) == 0
                                   : apart <= allowed;
        if (!continues) {
          out.push_back({"restored residuals continue bit for bit", setting, true, false,
                         "step " + std::to_string(step)});
          break;
        }
      }
    }
    double worst = 0, scale = 0;
    const std::vector<float>& r = a.residuals().at(0);
    for (std::size_t i = 0; i < n; ++i) {
      worst = std::max(worst, std::abs(gradients[i] - (sent[i] + r[i])));
      scale = std::max(scale, std::abs(gradients[i]));
    }
    out.push_back({"error feedback: what was sent plus the residual is the gradients' sum", setting,
                   true, worst <= 1e-4 * std::max(1.0, scale),
                   "largest difference " + std::to_string(worst) + " over 12 steps"});
    out.push_back(three_rank_sum(make, *codec, n, setting));
  }
  return out;
}

}  // namespace dtnn::testing
