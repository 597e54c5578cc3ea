// powersgd: PowerSGD (Vogels, Karimireddy and Jaggi, NeurIPS 2019), rank-r compression of a
// bucket's gradients by one step of power iteration, warm-started from the last step's factors.
// Each tensor of the bucket is a matrix M (its axes split into the squarest rows x cols: a conv's
// filters K x C KH KW; a lone bucket of n values ceil(n / c) x c, c = ceil(sqrt(n)), zeros after
// the last); with Q its (cols x r) factor from the step before (seeded random at first):
//   P = sum over ranks of M_i Q          (an allreduce of rows x r values)
//   P^ = P with orthonormal columns      (Gram-Schmidt, the same bits on every rank)
//   Q = sum over ranks of M_i^T P^       (an allreduce of cols x r values; the next step's start)
//   sum ~ P^ Q^T
// so a rank sends (rows + cols) r floats instead of rows x cols. The second allreduce needs the
// first's result: the codec sums over the ranks itself (Codec::Combination::reduce), the bucket's
// tensors together (one allreduce of every P and of the tensors too small to gain, (rows + cols) r
// >= rows x cols, such as biases, which go as they are; one of every Q). The exchange's error
// feedback keeps what each rank's share of the sum left out. Averaging weights through it would
// keep r directions of them: model averaging goes plain.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "dtnn/codec.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

// The bucket's matrix: rows x cols holds n values, row by row; r the factors' width.
struct Shape2 {
  std::int64_t rows, cols, r;
  bool compressed;  // else the values go as they are
};

// A tensor of the bucket: count values from offset, as a matrix of s.rows x s.cols (zeros after
// the count). at: where its values (plain) or its P (compressed) lie in the first allreduce's
// buffer; q_at: where its Q lies in the state.
struct Piece {
  std::size_t offset, count;
  Shape2 s;
  std::size_t at = 0, q_at = 0;
  std::size_t p_size() const { return static_cast<std::size_t>(s.rows * s.r); }
  std::size_t q_size() const { return static_cast<std::size_t>(s.cols * s.r); }
};

class PowerSgd final : public Codec {
 public:
  explicit PowerSgd(const Params& p) : rank_(p.get_int("rank")) {
    if (rank_ < 1) p.fail("rank", "a positive integer");
  }

  // count values as a rows x cols matrix: factors of width r, compressed when they are fewer.
  Shape2 plan(std::int64_t rows, std::int64_t cols, std::int64_t count) const {
    const std::int64_t r = std::min({rank_, rows, cols});
    return {rows, cols, r, (rows + cols) * r < count};
  }

  // n values on their own: ceil(n / c) x c, c = ceil(sqrt(n)).
  Shape2 shape(std::size_t n) const {
    const auto cols = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    const std::int64_t rows = cols > 0 ? (static_cast<std::int64_t>(n) + cols - 1) / cols : 0;
    return plan(rows, cols, static_cast<std::int64_t>(n));
  }

  std::size_t payload_bytes(std::size_t n) const override {
    const Shape2 s = shape(n);
    return sizeof(float) * (s.compressed ? static_cast<std::size_t>((s.rows + s.cols) * s.r) : n);
  }

  // One rank's case: the factors of x alone from the seeded start, P^ then Q.
  void encode(std::span<const float> x, std::span<unsigned char> payload) const override {
    const Shape2 s = shape(x.size());
    if (!s.compressed) {
      std::memcpy(payload.data(), x.data(), x.size_bytes());
      return;
    }
    const std::vector<float> m = matrix(x, s);
    std::vector<float> q = initial_q(s), p(static_cast<std::size_t>(s.rows * s.r));
    times_q(m, q, p, s);
    orthonormalize(p, s);
    times_p(m, p, q, s);
    std::memcpy(payload.data(), p.data(), p.size() * sizeof(float));
    std::memcpy(payload.data() + p.size() * sizeof(float), q.data(), q.size() * sizeof(float));
  }

  void decode_add(std::span<const unsigned char> payload, std::span<float> out,
                  float scale) const override {
    const Shape2 s = shape(out.size());
    std::vector<float> values(payload_bytes(out.size()) / sizeof(float));
    std::memcpy(values.data(), payload.data(), values.size() * sizeof(float));
    if (!s.compressed) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] += scale * values[i];
      return;
    }
    const std::span<const float> p(values.data(), static_cast<std::size_t>(s.rows * s.r));
    const std::span<const float> q(values.data() + p.size(),
                                   static_cast<std::size_t>(s.cols * s.r));
    const std::vector<float> m = product(p, q, s);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += scale * m[i];
  }

  std::size_t reduce(Communicator& comm, std::span<float> data,
                     std::span<const BucketMatrix> matrices, std::vector<float>& state,
                     const std::string& name, std::span<float> sent) const override {
    // The pieces: the exchange's tensors, or the whole bucket as one matrix.
    std::vector<Piece> pieces;
    if (matrices.empty()) {
      pieces.push_back({0, data.size(), shape(data.size())});
    } else {
      for (const BucketMatrix& m : matrices)
        pieces.push_back({m.offset, m.rows * m.cols,
                          plan(static_cast<std::int64_t>(m.rows), static_cast<std::int64_t>(m.cols),
                               static_cast<std::int64_t>(m.rows * m.cols))});
    }
    // One allreduce for the plain pieces' values, then every compressed piece's P; one for the Qs.
    std::size_t first = 0, qs = 0;
    for (Piece& p : pieces)
      if (!p.s.compressed) {
        p.at = first;
        first += p.count;
      }
    for (Piece& p : pieces)
      if (p.s.compressed) {
        p.at = first;
        p.q_at = qs;
        first += p.p_size();
        qs += p.q_size();
      }
    if (state.size() != qs) {  // the first sum, or another layout: the seeded start
      state.clear();
      std::size_t index = 0;
      for (const Piece& p : pieces)
        if (p.s.compressed) {
          const std::vector<float> q = initial_q(p.s, index++);
          state.insert(state.end(), q.begin(), q.end());
        }
    }
    std::vector<float> sums(first);
    std::vector<std::vector<float>> m(pieces.size());
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const Piece& p = pieces[k];
      const std::span<const float> values = data.subspan(p.offset, p.count);
      if (!p.s.compressed) {
        std::copy(values.begin(), values.end(), sums.begin() + static_cast<std::ptrdiff_t>(p.at));
        continue;
      }
      m[k] = matrix(values, p.s);
      times_q(m[k], std::span(state).subspan(p.q_at, p.q_size()),
              std::span(sums).subspan(p.at, p.p_size()), p.s);
    }
    comm.allreduce_sum(sums.data(), sums.size(), DType::float32, name + " (PowerSGD's P)");
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const Piece& p = pieces[k];
      if (!p.s.compressed) continue;
      const std::span<float> pk = std::span(sums).subspan(p.at, p.p_size());
      orthonormalize(pk, p.s);
      times_p(m[k], pk, std::span(state).subspan(p.q_at, p.q_size()), p.s);
    }
    if (!state.empty())
      comm.allreduce_sum(state.data(), state.size(), DType::float32, name + " (PowerSGD's Q)");
    std::fill(data.begin(), data.end(), 0.0f);  // the padding between tensors stays zeros
    for (const Piece& p : pieces) {
      const std::span<float> out = data.subspan(p.offset, p.count);
      if (!p.s.compressed) {
        std::copy_n(sums.begin() + static_cast<std::ptrdiff_t>(p.at), p.count, out.begin());
        continue;
      }
      const std::vector<float> sum = product(std::span(sums).subspan(p.at, p.p_size()),
                                             std::span(state).subspan(p.q_at, p.q_size()), p.s);
      std::copy_n(sum.begin(), p.count, out.begin());
    }
    // Error feedback keeps what this rank's equal share of the sum left out.
    const float share = 1.0f / static_cast<float>(comm.size());
    for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = share * data[i];
    return sizeof(float) * (sums.size() + state.size());
  }

  // A projection onto r directions keeps no fixed share of the squared norm: delta = 0, the
  // bound |x - decode(encode(x))|^2 <= |x|^2 of any orthogonal projection.
  double contraction(std::size_t n) const override { return shape(n).compressed ? 0.0 : 1.0; }
  bool carries_weights() const override { return false; }
  Combination combination() const override { return Combination::reduce; }

 private:
  static std::vector<float> matrix(std::span<const float> x, const Shape2& s) {
    std::vector<float> m(static_cast<std::size_t>(s.rows * s.cols), 0.0f);
    std::copy(x.begin(), x.end(), m.begin());
    return m;
  }

  // The first factor, Q (cols x r): standard normal values from a fixed seed per piece, the same
  // on every rank, so that the ranks' M_i Q add up.
  static std::vector<float> initial_q(const Shape2& s, std::size_t piece = 0) {
    std::mt19937 rng(static_cast<std::mt19937::result_type>(20191208 + piece));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(static_cast<std::size_t>(s.cols * s.r));
    for (float& v : q) v = normal(rng);
    return q;
  }

  // p = M q (rows x r).
  static void times_q(std::span<const float> m, std::span<const float> q, std::span<float> p,
                      const Shape2& s) {
    gemm(false, false, s.rows, s.r, s.cols, 1.0f, m.data(), s.cols, q.data(), s.r, 0.0f, p.data(),
         s.r);
  }

  // q = M^T p (cols x r).
  static void times_p(std::span<const float> m, std::span<const float> p, std::span<float> q,
                      const Shape2& s) {
    gemm(true, false, s.cols, s.r, s.rows, 1.0f, m.data(), s.cols, p.data(), s.r, 0.0f, q.data(),
         s.r);
  }

  // P^ Q^T (rows x cols).
  static std::vector<float> product(std::span<const float> p, std::span<const float> q,
                                    const Shape2& s) {
    std::vector<float> m(static_cast<std::size_t>(s.rows * s.cols));
    gemm(false, true, s.rows, s.cols, s.r, 1.0f, p.data(), s.r, q.data(), s.r, 0.0f, m.data(),
         s.cols);
    return m;
  }

  // Gram-Schmidt over p's r columns (rows x r, row-major), each column cleared of the earlier ones
  // twice ("twice is enough" in float32), sums in double. A column that was (numerically) in the
  // span of the earlier ones, its norm cancelled to float32's noise, becomes zeros rather than
  // that noise made unit: the factors then span fewer directions and P^ P^T stays a projection.
  static void orthonormalize(std::span<float> p, const Shape2& s) {
    auto at = [&](std::int64_t row, std::int64_t col) -> float& {
      return p[static_cast<std::size_t>(row * s.r + col)];
    };
    auto column_norm = [&](std::int64_t j) {
      double sum = 0;
      for (std::int64_t i = 0; i < s.rows; ++i) sum += double(at(i, j)) * at(i, j);
      return std::sqrt(sum);
    };
    for (std::int64_t j = 0; j < s.r; ++j) {
      const double before = column_norm(j);
      for (int pass = 0; pass < 2; ++pass)
        for (std::int64_t k = 0; k < j; ++k) {
          double dot = 0;
          for (std::int64_t i = 0; i < s.rows; ++i) dot += double(at(i, k)) * at(i, j);
          for (std::int64_t i = 0; i < s.rows; ++i) at(i, j) -= static_cast<float>(dot) * at(i, k);
        }
      const double norm = column_norm(j);
      const float inverse =
          norm > 1e-4 * before && norm > 1e-30 ? static_cast<float>(1.0 / norm) : 0.0f;
      for (std::int64_t i = 0; i < s.rows; ++i) at(i, j) *= inverse;
    }
  }

  std::int64_t rank_;
};

Plugin* create(const Params& p, const PluginContext&) { return new PowerSgd(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "codec", .name = "powersgd",
                   .description =
                       "PowerSGD: each tensor of a bucket as a rank-r product of two "
                       "factors, summed by two allreduces (Vogels et al., 2019)",
                   .parameters = R"({"rank": 4})",
                   .traits = R"({"conformance": [{"params": {"rank": 1}},
                                                 {"params": {"rank": 4}}]})",
                   .factory = create)
