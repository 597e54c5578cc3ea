// Tabular data (the csv dataset) for regression and multi-label models: a linear model learns a
// linear target with the mse loss, a sigmoid one two labels with binary_cross_entropy. (The csv
// reader's own tests: plugins/datasets/csv/test_csv.cpp.)
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
