// The dataset driver of plugin_conformance.hpp.
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "dtnn/dataset.hpp"
#include "dtnn/params.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

using nlohmann::json;

std::vector<Check> check_dataset(const Registry& registry, const PluginRecord& record,
                                 const std::string& case_json) {
  const json params = json::parse(case_json).value("params", json::object());
  auto make = [&] {
    return registry.create_as<Dataset>(
        "dataset", record.name, Params(params, "conformance: " + record.name), {}, record.device);
  };
  const std::string setting = "params " + params.dump();
  std::vector<Check> out;
  auto check = [&](const std::string& what, bool passed, const std::string& detail = "") {
    out.push_back({what, setting, true, passed, detail});
  };
  auto a = make(), b = make();
  const Shape shape = a->sample_shape(Layout::nhwc);
  const std::int64_t classes = a->num_classes();
  check("a sample shape, classes and a training split",
        shape.rank() >= 1 && shape.rank() <= 3 && shape.numel() > 0 && classes > 0 &&
            a->size(Split::train) > 0 && a->size(Split::test) >= 0,
        "shape " + shape.str() + ", " + std::to_string(classes) + " classes, " +
            std::to_string(a->size(Split::train)) + " training samples");
  check("two instances agree on sizes and shape",
        b->sample_shape(Layout::nhwc) == shape && b->num_classes() == classes &&
            b->size(Split::train) == a->size(Split::train) &&
            b->size(Split::test) == a->size(Split::test));

  for (Split split : {Split::train, Split::test}) {
    const std::int64_t size = a->size(split);
    if (size == 0) continue;
    const std::vector<std::int64_t> indices = {0, size - 1, size / 2, 0};
    const auto n = static_cast<std::int64_t>(indices.size());
    for (Layout layout : {Layout::nhwc, Layout::nchw}) {
      const std::string where =
          std::string(split == Split::train ? "train" : "test") + ", " + to_string(layout);
      GuardedTensor x1(a->sample_shape(layout).with_batch(n), DType::float32, layout);
      GuardedTensor y1(a->label_shape().with_batch(n), DType::float32, Layout::nhwc);
      Tensor x2 = Tensor::empty(x1.tensor().shape(), DType::float32, layout);
      Tensor y2 = Tensor::empty(y1.tensor().shape(), DType::float32);
      a->read(split, indices, x1.tensor(), y1.tensor());
      b->read(split, indices, x2, y2);
      const bool same = std::memcmp(x1.tensor().raw(), x2.raw(), x2.bytes()) == 0 &&
                        std::memcmp(y1.tensor().raw(), y2.raw(), y2.bytes()) == 0;
      check("reads are deterministic: two instances give the same bytes (" + where + ")", same);
      const std::size_t row = static_cast<std::size_t>(x2.numel() / n) * sizeof(float);
      check("a sample read twice in one batch is the same (" + where + ")",
            std::memcmp(x2.raw(), static_cast<const char*>(x2.raw()) + 3 * row, row) == 0);
      bool labels_valid = true, finite = true;
      if (a->class_id_labels()) {  // a class id (or kIgnoredLabel) per position
        for (std::int64_t i = 0; i < y2.numel(); ++i) {
          const double v = value_at(y2, i);
          labels_valid = labels_valid && (v == kIgnoredLabel ||
                                          (v >= 0 && v < double(classes) && v == std::floor(v)));
        }
      } else if (a->value_labels()) {  // targets: any finite values
        for (std::int64_t i = 0; i < y2.numel(); ++i)
          labels_valid = labels_valid && std::isfinite(value_at(y2, i));
      } else {
        for (std::int64_t r = 0; r < n; ++r) {
          double sum = 0;
          for (std::int64_t c = 0; c < classes; ++c) {
            const double v = value_at(y2, r * classes + c);
            labels_valid = labels_valid && (v == 0.0 || v == 1.0);
            sum += v;
          }
          labels_valid = labels_valid && sum == 1.0;
        }
      }
      for (std::int64_t i = 0; i < x2.numel(); ++i)
        finite = finite && std::isfinite(value_at(x2, i));
      check(
          "labels are one-hot (or class ids per position, or finite target values) and samples "
          "finite (" +
              where + ")",
          labels_valid && finite);
      const std::string guards = x1.check_guards() + y1.check_guards();
      check("a read writes nothing past its batch (" + where + ")", guards.empty(), guards);
    }
  }
  return out;
}

}  // namespace dtnn::testing
