// csv: a table of numbers, one sample a row: its features, then its targets (PyDTNN 3.x's
// regression data, or multi-label 0/1 columns). The labels are the target columns as they are:
// a model ends in `targets` outputs, linear for regression (loss mse, metrics regression_mse,
// regression_mae) or a sigmoid for multi-label data (loss binary_cross_entropy).
//   "path":       the training rows;
//   "test_path":  the test rows; "" takes every test_every-th row of path instead;
//   "targets":    how many trailing columns are targets (1).
// The file's format and its errors: csv_table.hpp.
#include <string>
#include <vector>

#include "csv_table.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/plugin_api.hpp"
#include "token_params.hpp"

namespace {

using namespace dtnn;

constexpr const char* kParameters =
    R"({"path": "", "test_path": "", "targets": 1, "test_every": 10})";

class Csv final : public Dataset {
 public:
  explicit Csv(const Params& p) : targets_(p.get_int("targets")) {
    const std::string path = p.get_string("path"), test_path = p.get_string("test_path");
    if (path.empty()) p.fail("path", "a CSV file of numbers: features, then targets");
    if (targets_ < 1) p.fail("targets", "a positive number of trailing target columns");
    const std::int64_t every = datasets::test_every(p);
    datasets::CsvTable train = datasets::read_csv_table(path);
    if (train.columns <= targets_)
      p.fail("targets", "fewer than the " + std::to_string(train.columns) + " columns of " + path);
    columns_ = train.columns;
    if (test_path.empty()) {
      for (std::size_t i = 0; i < train.rows.size(); ++i)
        (datasets::is_test(static_cast<std::int64_t>(i), every) ? test_ : train_)
            .push_back(std::move(train.rows[i]));
    } else {
      train_ = std::move(train.rows);
      datasets::CsvTable test = datasets::read_csv_table(test_path);
      if (test.columns != columns_)
        throw Error(test_path + ": " + std::to_string(test.columns) + " columns, " + path +
                    " has " + std::to_string(columns_));
      test_ = std::move(test.rows);
    }
    if (train_.empty()) throw Error(path + ": no training rows left after the test split");
  }

  Shape sample_shape(Layout) const override { return Shape{columns_ - targets_}; }
  std::int64_t num_classes() const override { return targets_; }
  bool value_labels() const override { return true; }
  std::int64_t size(Split s) const override {
    return static_cast<std::int64_t>((s == Split::train ? train_ : test_).size());
  }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    const auto& rows = s == Split::train ? train_ : test_;
    const std::int64_t features = columns_ - targets_;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      T *xp = x.data<T>(), *yp = y.data<T>();
      for (std::size_t i = 0; i < indices.size(); ++i) {
        DTNN_CHECK(indices[i] >= 0 && indices[i] < size(s), "csv: sample index out of range");
        const std::vector<double>& row = rows[static_cast<std::size_t>(indices[i])];
        for (std::int64_t j = 0; j < features; ++j)
          xp[static_cast<std::int64_t>(i) * features + j] = T(row[static_cast<std::size_t>(j)]);
        for (std::int64_t j = 0; j < targets_; ++j)
          yp[static_cast<std::int64_t>(i) * targets_ + j] =
              T(row[static_cast<std::size_t>(features + j)]);
      }
    });
  }

 private:
  std::int64_t targets_, columns_ = 0;
  std::vector<std::vector<double>> train_, test_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Csv(p); }

}  // namespace

// It reads files: the conformance checks it on files that the harness writes (its fixtures).
// A header, three features and two targets; a test file.
constexpr const char* kTraits = R"({"conformance": [], "fixtures": [{"kind": "files",
    "files": {"train.csv": "a,b,c,t1,t2\n1,2,3,0.5,1\n4,5,6,-1,0\n7,8,9,2.5,1\n",
              "test.csv": "1,1,1,0,0\n2,2,2,1,1\n"},
    "params": {"path": "$dir/train.csv", "test_path": "$dir/test.csv", "targets": 2}}]})";

DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "csv",
                   .description =
                       "a CSV table of numbers: features, then regression or "
                       "multi-label targets",
                   .parameters = kParameters, .traits = kTraits, .factory = create)
