// oktopk: Ok-Topk (Li and Hoefler, PPoPP 2022), the sparse allreduce of PyDTNN 3.x's oktopk
// optimizers. Of a bucket's n values, with k = max(min_k, density n):
//   1. each rank takes its values whose magnitude reaches its local threshold (about k of them);
//   2. the ranks sum what they took region by region: each rank owns a contiguous region of the
//      bucket and receives, in one all-to-all, the others' values in it, which it adds in rank
//      order;
//   3. each rank keeps of its region's sums those whose magnitude reaches the global threshold
//      (about k over all regions), and the ranks gather them: every rank holds the same sparse sum.
// The thresholds are the k-th largest magnitude, of the rank's values and of every region's sums,
// re-estimated every tau_prime sums and kept in between (an exact selection costs a partial sort
// and, for the global one, a gather of every region's sums). Every tau sums the regions'
// bounds move so that each holds about as many of the ranks' taken values (each rank proposes
// bounds that split its own values evenly; the ranks average them). With error feedback a rank's
// residual loses its values where the sum took them (taken locally and kept globally) and keeps
// the rest, as in Ok-Topk. The thresholds, bounds and step count are the bucket's codec state,
// kept in checkpoints (every rank's local threshold in every rank's state, so that rank 0's
// state, which a checkpoint keeps, resumes every rank).
// On the wire: (index, value) pairs of 8 bytes; counts and bounds as float64. A peer's index
// outside what it may send is an error naming the peer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/plugin_api.hpp"
#include "sparse_pairs.hpp"

namespace {

using namespace dtnn;
using codecs::Pair;

// What a bucket keeps between sums, stored in the exchange's float vector (raw bits), the same on
// every rank (the checkpoint keeps rank 0's): the sums so far, the global threshold, the regions'
// ends (region j: [ends[j - 1], ends[j]), ends[-1] = 0) and every rank's local threshold.
struct State {
  std::uint32_t step = 0;
  float global_threshold = 0;
  std::vector<std::uint32_t> ends;
  std::vector<float> local_thresholds;

  static constexpr std::size_t kHead = 2;
  // The saved state, or a fresh one for the first sum (or after the ranks or the bucket changed).
  static State load(const std::vector<float>& saved, std::size_t ranks, std::size_t n) {
    State s;
    if (saved.size() != kHead + 2 * ranks) return s;
    std::memcpy(&s.step, &saved[0], 4);
    s.global_threshold = saved[1];
    s.ends.resize(ranks);
    std::memcpy(s.ends.data(), &saved[kHead], 4 * ranks);
    s.local_thresholds.assign(saved.begin() + static_cast<std::ptrdiff_t>(kHead + ranks),
                              saved.end());
    if (s.ends.back() != n || !std::is_sorted(s.ends.begin(), s.ends.end())) return State{};
    return s;
  }
  void save(std::vector<float>& out) const {
    out.resize(kHead + 2 * ends.size());
    std::memcpy(&out[0], &step, 4);
    out[1] = global_threshold;
    std::memcpy(&out[kHead], ends.data(), 4 * ends.size());
    std::copy(local_thresholds.begin(), local_thresholds.end(), out.begin() + kHead + ends.size());
  }
  std::uint32_t begin_of(std::size_t region) const { return region == 0 ? 0 : ends[region - 1]; }
};

// Pairs as the communicators' float words (two each), and back.
std::vector<float> words_of(const std::vector<Pair>& pairs) {
  std::vector<float> w(2 * pairs.size());
  if (!pairs.empty()) std::memcpy(w.data(), pairs.data(), codecs::kPairBytes * pairs.size());
  return w;
}
std::vector<Pair> pairs_of(const float* words, std::size_t count) {
  std::vector<Pair> p(count);
  if (count) std::memcpy(p.data(), words, codecs::kPairBytes * count);
  return p;
}

class OkTopk final : public Codec {
 public:
  explicit OkTopk(const Params& p)
      : density_(p.get_double("density")),
        tau_(p.get_int("tau")),
        tau_prime_(p.get_int("tau_prime")),
        min_k_(p.get_int("min_k")) {
    if (!(density_ > 0 && density_ <= 1)) p.fail("density", "a fraction in (0, 1]");
    if (tau_ < 1) p.fail("tau", "a positive number of sums between the regions' re-balancing");
    if (tau_prime_ < 1)
      p.fail("tau_prime", "a positive number of sums between the thresholds' re-estimation");
    if (min_k_ < 1) p.fail("min_k", "a positive number of values");
  }

  // k = max(min_k, density n), at most n (PyDTNN's k per layer, here per bucket).
  std::size_t k(std::size_t n) const {
    const auto wanted = static_cast<std::size_t>(density_ * static_cast<double>(n));
    return std::min(n, std::max(wanted, static_cast<std::size_t>(min_k_)));
  }

  // One rank's case: its k largest magnitudes (ties by index), as (index, value) pairs.
  std::size_t payload_bytes(std::size_t n) const override { return codecs::kPairBytes * k(n); }
  void encode(std::span<const float> x, std::span<unsigned char> payload) const override {
    const std::size_t keep = k(x.size());
    std::vector<std::uint32_t> order(x.size());
    std::iota(order.begin(), order.end(), 0u);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                        const float fa = std::abs(x[a]), fb = std::abs(x[b]);
                        return fa > fb || (fa == fb && a < b);
                      });
    for (std::size_t j = 0; j < keep; ++j)
      codecs::write_pair(payload.data() + codecs::kPairBytes * j, {order[j], x[order[j]]});
  }
  void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                  float scale) const override {
    for (std::size_t j = 0; j < k(out.size()); ++j) {
      const Pair p = codecs::read_pair(payload.data() + codecs::kPairBytes * j);
      if (p.index >= out.size())
        throw Error("oktopk: a payload's index " + std::to_string(p.index) + " is beyond its " +
                    std::to_string(out.size()) + " values (a peer with another model?)");
      out[p.index] += scale * p.value;
    }
  }
  double contraction(std::size_t n) const override {
    return n == 0 ? 1.0 : static_cast<double>(k(n)) / static_cast<double>(n);
  }
  bool carries_weights() const override { return false; }
  Combination combination() const override { return Combination::reduce; }

  std::size_t reduce(Communicator& comm, std::span<float> data, std::span<const BucketMatrix>,
                     std::vector<float>& state, const std::string& name,
                     std::span<float> sent) const override {
    const auto ranks = static_cast<std::size_t>(comm.size());
    const std::size_t n = data.size(), keep = k(n);
    if (n >= (std::size_t{1} << 32)) throw Error("oktopk: a bucket above 2^32 values");
    std::size_t bytes = 0;  // this rank's values, indices and thresholds sent (no counts, padding)
    State s = State::load(state, ranks, n);
    const bool estimate = s.ends.empty() || s.step % static_cast<std::uint32_t>(tau_prime_) == 0;
    if (estimate) {  // this rank's, shared so that every rank's state is the same
      const float mine = keep < n ? codecs::kth_magnitude(data, keep) : 0.0f;
      s.local_thresholds.resize(ranks);
      comm.allgather(&mine, s.local_thresholds.data(), 1, DType::float32,
                     name + ", oktopk thresholds");
      bytes += sizeof(float) * (ranks - 1);
    }
    const std::vector<Pair> taken =
        codecs::pairs_above(data, s.local_thresholds[static_cast<std::size_t>(comm.rank())]);
    if (s.ends.empty() || s.step % static_cast<std::uint32_t>(tau_) == 0)
      s.ends = balanced_ends(comm, taken, n, name);
    const std::vector<Pair> region = sum_regions(comm, taken, s, n, name, bytes);
    if (estimate)  // keeping all n: no threshold, and no gather of the sums to find one
      s.global_threshold = keep < n ? global_threshold(comm, region, keep, name, bytes) : 0.0f;
    const std::vector<Pair> kept = codecs::pairs_above(values_of(region), s.global_threshold);
    std::vector<Pair> mine;  // kept holds positions in `region`: back to bucket indices
    for (const Pair& p : kept) mine.push_back({region[p.index].index, p.value});
    bytes += codecs::kPairBytes * mine.size() * (ranks - 1);
    std::fill(data.begin(), data.end(), 0.0f);
    std::vector<char> in_sum(sent.empty() ? 0 : n, 0);
    const std::vector<std::vector<float>> all =
        gather(comm, words_of(mine), name + ", oktopk kept");
    for (std::size_t r = 0; r < ranks; ++r)
      for (const Pair& p : pairs_of(all[r].data(), all[r].size() / 2)) {
        if (p.index < s.begin_of(r) || p.index >= s.ends[r])
          throw Error("oktopk: rank " + std::to_string(r) + " sent index " +
                      std::to_string(p.index) + ", outside its region [" +
                      std::to_string(s.begin_of(r)) + ", " + std::to_string(s.ends[r]) + ") of " +
                      std::to_string(n) + " values (a peer with another model?)");
        data[p.index] = p.value;
        if (!sent.empty()) in_sum[p.index] = 1;
      }
    for (const Pair& p : taken)  // error feedback: the values the sum took
      if (!sent.empty() && in_sum[p.index]) sent[p.index] = p.value;
    ++s.step;
    s.save(state);
    return bytes;
  }

 private:
  static std::vector<float> values_of(const std::vector<Pair>& pairs) {
    std::vector<float> v(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) v[i] = pairs[i].value;
    return v;
  }

  // Every rank's words (counts differ): one allgather of the counts, one of the words padded to
  // the longest. A rank's list is all[rank].
  static std::vector<std::vector<float>> gather(Communicator& comm, const std::vector<float>& mine,
                                                const std::string& name) {
    const auto ranks = static_cast<std::size_t>(comm.size());
    double count = static_cast<double>(mine.size());
    std::vector<double> counts(ranks);
    comm.allgather(&count, counts.data(), 1, DType::float64, name + " (counts)");
    const auto longest = static_cast<std::size_t>(*std::max_element(counts.begin(), counts.end()));
    std::vector<std::vector<float>> all(ranks);
    if (longest == 0) return all;
    std::vector<float> padded(longest, 0.0f), received(longest * ranks);
    std::copy(mine.begin(), mine.end(), padded.begin());
    comm.allgather(padded.data(), received.data(), longest, DType::float32, name);
    for (std::size_t r = 0; r < ranks; ++r) {
      const auto c = static_cast<std::size_t>(counts[r]);
      if (c > longest) throw Error("oktopk: rank " + std::to_string(r) + " sent a bad count");
      all[r].assign(received.begin() + static_cast<std::ptrdiff_t>(r * longest),
                    received.begin() + static_cast<std::ptrdiff_t>(r * longest + c));
    }
    return all;
  }

  // The regions' ends: each rank proposes the bounds that split its taken values evenly (equal
  // spans when it took none), the ranks average the proposals; the last region ends at n.
  static std::vector<std::uint32_t> balanced_ends(Communicator& comm,
                                                  const std::vector<Pair>& taken, std::size_t n,
                                                  const std::string& name) {
    const auto ranks = static_cast<std::size_t>(comm.size());
    std::vector<double> proposal(ranks);
    for (std::size_t j = 0; j + 1 < ranks; ++j) {
      const std::size_t share = (j + 1) * taken.size() / ranks;
      proposal[j] = taken.empty() ? static_cast<double>((j + 1) * n / ranks)
                                  : static_cast<double>(taken[share].index);
    }
    comm.allreduce_sum(proposal.data(), ranks, DType::float64, name + ", oktopk regions");
    std::vector<std::uint32_t> ends(ranks, static_cast<std::uint32_t>(n));
    for (std::size_t j = 0; j + 1 < ranks; ++j) {
      const double mean = std::floor(proposal[j] / static_cast<double>(ranks));
      ends[j] = static_cast<std::uint32_t>(std::clamp(mean, 0.0, static_cast<double>(n)));
      if (j > 0) ends[j] = std::max(ends[j], ends[j - 1]);
    }
    return ends;
  }

  // Step 2: the sums of every rank's taken values in this rank's region, in index order. One
  // allgather of the counts (rank r's count for region j), one all-to-all of the pairs padded to
  // the longest block; the owner adds them in rank order.
  static std::vector<Pair> sum_regions(Communicator& comm, const std::vector<Pair>& taken,
                                       const State& s, std::size_t n, const std::string& name,
                                       std::size_t& bytes) {
    const auto ranks = static_cast<std::size_t>(comm.size());
    const auto me = static_cast<std::size_t>(comm.rank());
    std::vector<std::size_t> first(ranks + 1, taken.size());  // taken[first[j]...]: region j's
    for (std::size_t j = 0, t = 0; j < ranks; ++j) {
      first[j] = t;
      while (t < taken.size() && taken[t].index < s.ends[j]) ++t;
    }
    std::vector<double> mine(ranks), counts(ranks * ranks);
    for (std::size_t j = 0; j < ranks; ++j) {
      mine[j] = static_cast<double>(first[j + 1] - first[j]);
      if (j != me) bytes += codecs::kPairBytes * (first[j + 1] - first[j]);
    }
    comm.allgather(mine.data(), counts.data(), ranks, DType::float64,
                   name + ", oktopk region counts");
    const auto longest = static_cast<std::size_t>(*std::max_element(counts.begin(), counts.end()));
    const std::uint32_t begin = s.begin_of(me), end = s.ends[me];
    std::vector<float> sums(end - begin, 0.0f);
    std::vector<char> touched(end - begin, 0);
    if (longest > 0) {
      std::vector<float> send(ranks * 2 * longest, 0.0f), received(send.size());
      for (std::size_t j = 0; j < ranks; ++j)
        std::memcpy(&send[j * 2 * longest], taken.data() + first[j],
                    codecs::kPairBytes * (first[j + 1] - first[j]));
      comm.alltoall(send.data(), received.data(), 2 * longest, DType::float32,
                    name + ", oktopk regions");
      for (std::size_t r = 0; r < ranks; ++r) {
        const auto c = static_cast<std::size_t>(counts[r * ranks + me]);
        if (c > longest) throw Error("oktopk: rank " + std::to_string(r) + " sent a bad count");
        for (const Pair& p : pairs_of(&received[r * 2 * longest], c)) {
          if (p.index < begin || p.index >= end)
            throw Error("oktopk: rank " + std::to_string(r) + " sent index " +
                        std::to_string(p.index) + " to the region [" + std::to_string(begin) +
                        ", " + std::to_string(end) + ") of " + std::to_string(n) +
                        " values (a peer with another model?)");
          sums[p.index - begin] += p.value;
          touched[p.index - begin] = 1;
        }
      }
    }
    std::vector<Pair> region;
    for (std::size_t i = 0; i < sums.size(); ++i)
      if (touched[i]) region.push_back({static_cast<std::uint32_t>(begin + i), sums[i]});
    return region;
  }

  // The k-th largest magnitude of every region's sums, gathered.
  static float global_threshold(Communicator& comm, const std::vector<Pair>& region,
                                std::size_t keep, const std::string& name, std::size_t& bytes) {
    const std::vector<float> mine = values_of(region);
    bytes += sizeof(float) * mine.size() * static_cast<std::size_t>(comm.size() - 1);
    std::vector<float> every;
    for (const auto& r : gather(comm, mine, name + ", oktopk sums"))
      every.insert(every.end(), r.begin(), r.end());
    return codecs::kth_magnitude(every, keep);
  }

  double density_;
  std::int64_t tau_, tau_prime_, min_k_;
};

Plugin* create(const Params& p, const PluginContext&) { return new OkTopk(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "oktopk",
                   .description =
                       "Ok-Topk's sparse allreduce: values above a local threshold "
                       "summed region by region, the sums above a global threshold "
                       "gathered; thresholds kept for tau_prime sums",
                   .parameters = R"({"density": 0.01, "tau": 64, "tau_prime": 32, "min_k": 10})",
                   .traits = R"({"conformance": [
                     {"params": {"density": 0.01}},
                     {"params": {"density": 0.3, "tau": 2, "tau_prime": 1}},
                     {"params": {"density": 1.0, "min_k": 1}}]})",
                   .factory = create)
