#include "dtnn/tensorboard.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/model.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

namespace fs = std::filesystem;

namespace {

// The protobuf wire format, as much as these messages need: varints, 64-bit and 32-bit fixed
// fields, and length-delimited ones (strings, bytes, nested messages, packed doubles).
class Proto {
 public:
  Proto& varint(int field, std::uint64_t v) {
    key(field, 0);
    put_varint(v);
    return *this;
  }
  Proto& fixed64(int field, double v) {
    key(field, 1);
    put_bytes(&v, sizeof v);  // little-endian, as x86-64 and the wire format are
    return *this;
  }
  Proto& fixed32(int field, float v) {
    key(field, 5);
    put_bytes(&v, sizeof v);
    return *this;
  }
  Proto& bytes(int field, std::string_view v) {
    key(field, 2);
    put_varint(v.size());
    bytes_.append(v);
    return *this;
  }
  Proto& message(int field, const Proto& m) { return bytes(field, m.str()); }
  Proto& packed(int field, const std::vector<double>& v) {
    key(field, 2);
    put_varint(v.size() * sizeof(double));
    put_bytes(v.data(), v.size() * sizeof(double));
    return *this;
  }
  const std::string& str() const { return bytes_; }

 private:
  void key(int field, int wire_type) { put_varint(std::uint64_t(field) << 3 | wire_type); }
  void put_varint(std::uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
  }
  void put_bytes(const void* p, std::size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Event {wall_time = 1, step = 2, then one of file_version = 3, graph_def = 4, summary = 5}.
Proto event(std::int64_t step) {
  Proto e;
  e.fixed64(1, wall_time());
  if (step != 0) e.varint(2, static_cast<std::uint64_t>(step));
  return e;
}

// Summary {repeated Value value = 1}, Value {tag = 1, simple_value = 2 | histo = 5}.
std::string summary_event(std::int64_t step, const Proto& value) {
  return event(step).message(5, Proto().message(1, value)).str();
}

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == 0) return "localhost";
  return name.data();
}

std::array<std::uint32_t, 256> crc32c_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;  // reflected
    t[i] = c;
  }
  return t;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t n) {
  static const std::array<std::uint32_t, 256> table = crc32c_table();
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

std::uint32_t masked_crc32c(const void* data, std::size_t n) {
  const std::uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

void TensorBoardWriter::make_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error("output.tensorboard: cannot make the folder " + dir.string() +
                (ec ? ": " + ec.message() : ": a file of that name is in the way"));
}

TensorBoardWriter::TensorBoardWriter(const fs::path& dir) {
  make_folder(dir);
  const auto seconds = static_cast<long long>(wall_time());
  // Two writers started in the same second on one host (a restarted run) keep apart.
  for (int n = 0; n < 1000; ++n) {
    file_ = dir / ("events.out.tfevents." + std::to_string(seconds) + "." + host_name() +
                   (n ? "." + std::to_string(n) : ""));
    if (!fs::exists(file_)) break;
  }
  out_.open(file_, std::ios::binary);
  if (!out_) throw Error("output.tensorboard: cannot write " + file_.string());
  write_event(event(0).bytes(3, "brain.Event:2").str());
  flush();
}

TensorBoardWriter::~TensorBoardWriter() = default;

void TensorBoardWriter::write_event(const std::string& e) {
  const std::uint64_t length = e.size();
  const std::uint32_t length_crc = masked_crc32c(&length, sizeof length);
  const std::uint32_t data_crc = masked_crc32c(e.data(), e.size());
  out_.write(reinterpret_cast<const char*>(&length), sizeof length);
  out_.write(reinterpret_cast<const char*>(&length_crc), sizeof length_crc);
  out_.write(e.data(), static_cast<std::streamsize>(e.size()));
  out_.write(reinterpret_cast<const char*>(&data_crc), sizeof data_crc);
  if (!out_) throw Error("output.tensorboard: cannot write " + file_.string());
}

void TensorBoardWriter::flush() {
  out_.flush();
  if (!out_) throw Error("output.tensorboard: cannot write " + file_.string());
}

void TensorBoardWriter::scalar(std::string_view tag, double value, std::int64_t step) {
  write_event(summary_event(step, Proto().bytes(1, tag).fixed32(2, static_cast<float>(value))));
}

void TensorBoardWriter::histogram(std::string_view tag, const Tensor& values, std::int64_t step,
                                  int buckets) {
  const Tensor host = values.device() == Device::cpu ? values : values.to(Device::cpu);
  const auto n = static_cast<std::size_t>(host.numel());
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0, squares = 0;
  // HistogramProto {min = 1, max = 2, num = 3, sum = 4, sum_squares = 5, bucket_limit = 6,
  // bucket = 7}: bucket i counts the values up to bucket_limit[i], above the previous limit.
  std::vector<double> limits, counts;
  dispatch_dtype(host.dtype(), [&](auto z) {  // two passes over the values, in their own type
    using T = decltype(z);
    const std::span<const T> v(host.data<T>(), n);
    for (const T t : v) {
      const auto x = static_cast<double>(t);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
      squares += x * x;
    }
    if (n == 0) {
      lo = hi = 0;
    } else if (lo == hi || buckets <= 1) {
      limits.push_back(hi);
      counts.push_back(static_cast<double>(n));
    } else {
      const double width = (hi - lo) / buckets;
      for (int b = 1; b <= buckets; ++b) limits.push_back(b == buckets ? hi : lo + width * b);
      counts.assign(static_cast<std::size_t>(buckets), 0.0);
      for (const T t : v) {
        const auto b =
            std::min<std::size_t>(static_cast<std::size_t>((static_cast<double>(t) - lo) / width),
                                  static_cast<std::size_t>(buckets - 1));
        counts[b] += 1;
      }
    }
  });
  Proto histo;
  histo.fixed64(1, lo).fixed64(2, hi).fixed64(3, static_cast<double>(n));
  histo.fixed64(4, sum).fixed64(5, squares).packed(6, limits).packed(7, counts);
  write_event(summary_event(step, Proto().bytes(1, tag).message(5, histo)));
}

void TensorBoardWriter::graph(const Model& model) {
  // GraphDef {node = 1}, NodeDef {name = 1, op = 2, input = 3, attr = 5 (map<string, AttrValue>,
  // entries {key = 1, value = 2})}, AttrValue {s = 2, i = 3}.
  auto attr = [](Proto& node, std::string_view key, const Proto& value) {
    node.message(5, Proto().bytes(1, key).message(2, value));
  };
  Proto graph, input;
  input.bytes(1, "0.input").bytes(2, "input");
  attr(input, "output_shape", Proto().bytes(2, model.input_shape().str()));
  graph.message(1, input);
  std::string previous = "0.input";
  for (std::size_t i = 0; i < model.num_layers(); ++i) {
    const Layer& layer = model.layer(i);
    const std::string name = std::to_string(i + 1) + "." + layer.type();
    const auto [first, last] = model.parameter_range(i);
    std::int64_t parameters = 0;
    for (std::size_t p = first; p < last; ++p) parameters += model.parameters()[p].value.numel();
    Proto node;
    node.bytes(1, name).bytes(2, layer.type()).bytes(3, previous);
    attr(node, "output_shape", Proto().bytes(2, layer.output_shape().str()));
    attr(node, "parameters", Proto().varint(3, static_cast<std::uint64_t>(parameters)));
    if (const std::string a = layer.attributes(); !a.empty())
      attr(node, "attributes", Proto().bytes(2, a));
    graph.message(1, node);
    previous = name;
  }
  write_event(event(0).bytes(4, graph.str()).str());
}

}  // namespace dtnn
