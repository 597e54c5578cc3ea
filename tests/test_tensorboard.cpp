// TensorBoard's event files (dtnn/tensorboard.hpp): the CRC-32C and its mask, and the framing of
// every record the writer makes. What the records say is checked by TensorBoard's own reader
// (tests/tensorboard.py).
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"
#include "dtnn/tensorboard.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

struct Record {
  std::string data;
  bool length_crc_ok = false, data_crc_ok = false;
};

// The records of an event file: [u64 length][u32 masked crc of it][data][u32 masked crc of it].
std::vector<Record> read_records(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Record> out;
  std::size_t at = 0;
  while (at + 12 <= bytes.size()) {
    std::uint64_t length;
    std::uint32_t length_crc, data_crc;
    std::memcpy(&length, bytes.data() + at, 8);
    std::memcpy(&length_crc, bytes.data() + at + 8, 4);
    REQUIRE(at + 12 + length + 4 <= bytes.size());
    Record r;
    r.data = bytes.substr(at + 12, length);
    std::memcpy(&data_crc, bytes.data() + at + 12 + length, 4);
    r.length_crc_ok = length_crc == masked_crc32c(&length, 8);
    r.data_crc_ok = data_crc == masked_crc32c(r.data.data(), r.data.size());
    out.push_back(r);
    at += 12 + length + 4;
  }
  CHECK(at == bytes.size());
  return out;
}

}  // namespace

TEST_CASE("CRC-32C gives the standard check value, and TensorFlow's mask") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  CHECK(crc32c("", 0) == 0u);
  const std::uint32_t c = crc32c("a", 1);
  CHECK(c == 0xC1D04330u);
  CHECK(masked_crc32c("a", 1) == ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST_CASE("every record of an event file is framed with its length and both CRCs") {
  const auto dir = test::temp_dir("tensorboard") / "run";
  std::filesystem::remove_all(dir);
  std::filesystem::path file;
  {
    TensorBoardWriter tb(dir);
    file = tb.file();
    CHECK(file.filename().string().starts_with("events.out.tfevents."));
    tb.scalar("epoch/loss", 0.5, 1);
    Tensor w = Tensor::zeros(Shape{10}, DType::float32, Layout::nchw);
    for (int i = 0; i < 10; ++i) w.data<float>()[i] = float(i);
    tb.histogram("weights/fc", w, 1);
    tb.histogram("weights/constant", Tensor::zeros(Shape{3}, DType::float64, Layout::nchw), 1);
    tb.flush();
  }
  const std::vector<Record> records = read_records(file);
  REQUIRE(records.size() == 4);
  for (const Record& r : records) {
    CHECK(r.length_crc_ok);
    CHECK(r.data_crc_ok);
  }
  CHECK(records[0].data.find("brain.Event:2") != std::string::npos);
  CHECK(records[1].data.find("epoch/loss") != std::string::npos);
  CHECK(records[2].data.find("weights/fc") != std::string::npos);
  std::filesystem::remove_all(dir.parent_path());
}

TEST_CASE("a folder that cannot be made is an error naming it") {
  const auto dir = test::temp_dir("tensorboard-blocked");
  const auto blocker = dir / "file";
  std::ofstream(blocker) << "x";
  const std::string message = [&] {
    try {
      TensorBoardWriter tb(blocker / "run");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }();
  CHECK(message.find("output.tensorboard: cannot make the folder") != std::string::npos);
  CHECK(message.find((blocker / "run").string()) != std::string::npos);
  std::filesystem::remove_all(dir);
}
