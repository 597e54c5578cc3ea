// The csv dataset's reader: rows, header, byte-order mark, underflow, and the errors that name the
// file, the line and the column. (The models trained on csv files: tests/test_tabular.cpp.)
#include <doctest/doctest.h>

#include <fstream>

#include "dtnn/dataset.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

std::filesystem::path write_csv(const std::string& name, const std::string& text) {
  const auto file = test::temp_dir("csv_reader") / name;
  std::ofstream(file) << text;
  return file;
}

std::shared_ptr<Dataset> csv(const json& params) {
  return test::plugins().create_as<Dataset>("dataset", "csv", Params(params, "exp.json: dataset"));
}

}  // namespace

TEST_CASE("csv: features then targets, a header skipped, errors by file, line and column") {
  const auto file = write_csv("t.csv", "a, b ,c\n1,2,3\n4,5,6\n\n7,8,9\n10,11,12\n");
  auto d = csv({{"path", file.string()}, {"targets", 1}, {"test_every", 2}});
  CHECK(d->sample_shape(Layout::nhwc) == Shape{2});
  CHECK(d->num_classes() == 1);
  CHECK(d->size(Split::train) == 2);  // rows 1 and 3; rows 2 and 4 are the test split
  CHECK(d->size(Split::test) == 2);
  Tensor x = Tensor::empty(Shape{2, 2}, DType::float32),
         y = Tensor::empty(Shape{2, 1}, DType::float32);
  const std::int64_t both[] = {0, 1};
  d->read(Split::test, both, x, y);
  CHECK(std::vector<float>(x.data<float>(), x.data<float>() + 4) ==
        std::vector<float>{4, 5, 10, 11});
  CHECK(std::vector<float>(y.data<float>(), y.data<float>() + 2) == std::vector<float>{6, 12});

  const auto bad = write_csv("bad.csv", "1,2,3\n4,x5,6\n");
  CHECK(test::error_of([&] {
          csv({{"path", bad.string()}});
        }) == bad.string() + ": line 2, column 2: 'x5' is not a number");
  const auto ragged = write_csv("ragged.csv", "1,2,3\n4,5\n");
  CHECK(test::error_of([&] {
          csv({{"path", ragged.string()}});
        }) == ragged.string() + ": line 2: 2 columns, the rows before have 3");
  CHECK(test::error_of([&] {
          csv({{"path", file.string()}, {"targets", 3}});
        }).find("dataset.targets: expected fewer than the 3 columns") != std::string::npos);
}

TEST_CASE("csv: a byte-order mark, underflow, and non-finite values are read or named at load") {
  // A BOM before the header: the header is still a header, and the first data row is kept.
  const auto bom = write_csv("bom.csv",
                             "\xEF\xBB\xBF"
                             "x,y\n1,2\n3,4\n");
  CHECK(csv({{"path", bom.string()}, {"test_every", 0}})->size(Split::train) == 2);
  // A BOM before a first row of numbers: that row is data, not a header.
  const auto bom_data = write_csv("bom_data.csv",
                                  "\xEF\xBB\xBF"
                                  "1,2\n3,4\n");
  CHECK(csv({{"path", bom_data.string()}, {"test_every", 0}})->size(Split::train) == 2);
  // 1e-400 is a valid number below the smallest double: it reads as 0.
  const auto tiny = write_csv("tiny.csv", "1e-400,2\n3,4\n");
  auto d = csv({{"path", tiny.string()}, {"test_every", 0}});
  Tensor x = Tensor::empty(Shape{1, 1}, DType::float32),
         y = Tensor::empty(Shape{1, 1}, DType::float32);
  const std::int64_t first[] = {0};
  d->read(Split::train, first, x, y);
  CHECK(x.data<float>()[0] == 0.0f);
  const auto huge = write_csv("huge.csv", "1,2\n1e400,4\n");
  CHECK(test::error_of([&] {
          csv({{"path", huge.string()}});
        }) == huge.string() + ": line 2, column 1: '1e400' is out of a double's range");
  for (const std::string value : {"nan", "inf", "-inf", "NaN"}) {
    CAPTURE(value);
    const auto bad = write_csv("nonfinite.csv", "1,2\n3," + value + "\n");
    CHECK(test::error_of([&] {
            csv({{"path", bad.string()}});
          }) == bad.string() + ": line 2, column 2: '" + value +
                    "' is not finite: inputs and targets are finite numbers");
  }
}
