// Tabular data (the csv dataset) for regression and multi-label models: its rows and errors, and
// a linear model that learns a linear target with the mse loss, a sigmoid one two labels with
// binary_cross_entropy.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "dtnn/dataset.hpp"
#include "dtnn/experiment.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

std::filesystem::path write_csv(const std::string& name, const std::string& text) {
  const auto file = test::temp_dir("csv") / name;
  std::ofstream(file) << text;
  return file;
}

std::shared_ptr<Dataset> csv(const json& params) {
  return test::plugins().create_as<Dataset>("dataset", "csv", Params(params, "exp.json: dataset"));
}

// Rows x1, x2, x3, y1 = 2 x1 - x2 + 0.5 x3 + 0.25, y2 = [x1 > x2] (a linear and a 0/1 target).
std::filesystem::path linear_table(int rows) {
  std::string text = "x1,x2,x3,y1,y2\n";
  for (int i = 0; i < rows; ++i) {
    const double x1 = std::sin(0.7 * i), x2 = std::cos(1.3 * i), x3 = std::sin(0.11 * i * i);
    text += std::to_string(x1) + "," + std::to_string(x2) + "," + std::to_string(x3) + "," +
            std::to_string(2 * x1 - x2 + 0.5 * x3 + 0.25) + "," + (x1 > x2 ? "1" : "0") + "\n";
  }
  return write_csv("linear.csv", text);
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

TEST_CASE("regression: a linear model learns a linear target from a csv file with mse") {
  json config = json::parse(R"({
    "model": {"layers": [{"type": "fc", "units": 1}]},
    "dataset": {"name": "csv", "targets": 1},
    "training": {"batch_size": 16, "epochs": 30, "seed": 1, "evaluate": true},
    "optimizer": {"name": "adam", "learning_rate": 0.05},
    "loss": "mse",
    "metrics": ["regression_mse", "regression_mae"],
    "output": {"progress": "none"}})");
  // Only y1: the table without its last column.
  std::ifstream in(linear_table(400));
  std::string text, line;
  while (std::getline(in, line)) text += line.substr(0, line.rfind(',')) + "\n";
  config["dataset"]["path"] = write_csv("y1.csv", text).string();
  Experiment e(make_experiment(config, {}, "exp.json"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  MESSAGE("regression test mse " << h.test->metrics.at("regression_mse"));
  CHECK(h.test->metrics.at("regression_mse") < 1e-3);
}

TEST_CASE("multi-label: two sigmoid outputs learn a linear and a 0/1 target's sign") {
  json config = json::parse(R"({
    "model": {"layers": [{"type": "fc", "units": 16}, {"type": "tanh"}, {"type": "fc", "units": 2},
                         {"type": "sigmoid"}]},
    "dataset": {"name": "csv", "targets": 2},
    "training": {"batch_size": 16, "epochs": 40, "seed": 1, "evaluate": true},
    "optimizer": {"name": "adam", "learning_rate": 0.02},
    "loss": "binary_cross_entropy",
    "metrics": ["binary_confusion_matrix"],
    "output": {"progress": "none"}})");
  // Targets: y1 > 0.25 and x1 > x2, both 0/1.
  std::ifstream in(linear_table(600));
  std::string text, line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) v.push_back(std::stod(c));
    text += std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + "," +
            (v[3] > 0.25 ? "1" : "0") + "," + (v[4] > 0.5 ? "1" : "0") + "\n";
  }
  config["dataset"]["path"] = write_csv("labels.csv", text).string();
  Experiment e(make_experiment(config, {}, "exp.json"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  MESSAGE("multi-label test loss " << h.test->loss);
  CHECK(h.test->loss < 0.2);  // chance: 0.69
}
