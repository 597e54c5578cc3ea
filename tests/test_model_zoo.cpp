// Every model of configs/models: it builds, its parameter count is the one docs/models.md states,
// and one small step against the gradient on a synthetic batch lowers the loss on that batch.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>

#include "dtnn/config.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

const std::filesystem::path kSource = DTNN_TEST_SOURCE_DIR;
// Sequence models are counted at the default text experiment's context and vocabulary (the
// characters of the fortunes package).
constexpr std::int64_t kContext = 128, kVocabulary = 113;
constexpr std::int64_t kImageClasses = 10;  // "$classes" of the image models

// docs/models.md's table: "| `name` | 15,245,130 | 32x32x3 | ... |" -> {name: row}.
struct Documented {
  std::int64_t count = 0;
  std::string input;        // "32x32x3", "128 tokens"
  std::string description;  // "... (counted at 1000 classes)"
};
std::map<std::string, Documented> documented() {
  std::ifstream in(kSource / "docs" / "models.md");
  REQUIRE(in.good());
  std::map<std::string, Documented> rows;
  const std::regex row(R"(^\| `([A-Za-z0-9_]+)` \| ([0-9,]+) \| ([^|]*) \| ([^|]*) \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string digits = m[2];
    std::erase(digits, ',');
    rows[m[1]] = {std::stoll(digits), m[3], m[4]};
  }
  return rows;
}

// An image model's documented input, "HxWxC" (the shape it is counted at when it takes the
// dataset's), and classes, "counted at N classes" (else kImageClasses). Nothing for a token
// model's row.
std::optional<std::pair<Shape, std::int64_t>> documented_image(const Documented& d) {
  std::smatch m;
  if (!std::regex_match(d.input, m, std::regex(R"(([0-9]+)x([0-9]+)x([0-9]+))"))) return {};
  std::smatch c;
  const bool counted =
      std::regex_search(d.description, c, std::regex(R"(counted at ([0-9]+) classes)"));
  return std::make_pair(Shape{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])},
                        counted ? std::stoll(c[1]) : kImageClasses);
}

double loss_of(Model& model, Loss& loss, const Tensor& x, const Tensor& y) {
  return loss.forward(model.forward(x, Mode::train), y);
}

}  // namespace

TEST_CASE("model zoo: every model builds, has its documented parameter count, and trains") {
  const auto rows = documented();
  REQUIRE(rows.size() >= 10);
  auto cross_entropy =
      test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  auto nll = test::plugins().create_as<Loss>("loss", "nll", Params());
  auto dice = test::plugins().create_as<Loss>("loss", "dice", Params());
  auto mse = test::plugins().create_as<Loss>("loss", "mse", Params());
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "configs" / "models")) {
    if (entry.path().extension() != ".json") continue;
    ModelSpec spec = load_model_spec(entry.path());
    CAPTURE(spec.name);
    REQUIRE_MESSAGE(rows.count(spec.name), "docs/models.md has no row for " << spec.name);
    const auto image = documented_image(rows.at(spec.name));  // its shape: a model's own if set
    // A model without input_shape takes tokens: its context and vocabulary are the dataset's.
    // Its output is a class per position (a language model, an encoder-decoder's decoder: the
    // classes are the vocabulary) or one per sequence (a classifier: kImageClasses). An
    // encoder-decoder's source is the first half of the context. docs/models.md counts them so.
    const bool tokens = !spec.input_shape && !image;
    const Shape input = tokens             ? Shape{kContext}
                        : spec.input_shape ? *spec.input_shape
                                           : image->first;
    const std::int64_t image_classes = spec.classes ? *spec.classes
                                       : image      ? image->second
                                                    : kImageClasses;
    auto build = [&](std::int64_t classes) {
      ModelSpec s = spec;
      substitute_sizes(
          s.layers,
          {{"$vocab", kVocabulary}, {"$classes", classes}, {"$source_length", kContext / 2}});
      ModelOptions options;
      options.max_batch = 2;
      options.conv_algorithm = "i2c";
      return std::make_unique<Model>(s, options, input, test::plugins());
    };
    std::unique_ptr<Model> built = build(tokens ? kVocabulary : image_classes);
    const bool sequence = tokens && built->output_shape().rank() == 2;
    if (tokens && !sequence) built = build(kImageClasses);
    Model& model = *built;
    CHECK(model.parameter_count() == rows.at(spec.name).count);
    // A pinned variant (resnet20_cifar10: resnet20 at 32x32x3, 10 classes) has its base's layers,
    // which the base's own row trains: counted only.
    if (read_json_file(entry.path()).contains("base")) {
      ++models;
      continue;
    }

    const std::int64_t classes = model.output_shape().numel();
    const std::int64_t positions = sequence ? model.output_shape()[0] : 0;
    Tensor x = Tensor::empty(input.with_batch(2), DType::float32);
    Tensor y = Tensor::zeros(sequence ? Shape{2, positions} : Shape{2, classes}, DType::float32);
    for (std::int64_t i = 0; i < x.numel(); ++i)
      x.data<float>()[i] =
          tokens ? float((i * 7919) % kVocabulary) : float((i * 7919) % 1000) / 500.0f - 1.0f;
    if (sequence) {
      for (std::int64_t i = 0; i < y.numel(); ++i)
        y.data<float>()[i] = float((i * 31) % kVocabulary);
    } else {
      y.data<float>()[1] = y.data<float>()[classes + 3] = 1;
    }
    // The loss a model's output calls for: log-probabilities (a log_softmax, also an image
    // classifier's such as vgg16_pytorch) take nll, a sigmoid's mask (unet) the Dice loss,
    // softmax classifiers cross-entropy, the rest (bert's vectors, identity) the squared error.
    const std::string last = model.layer(model.num_layers() - 1).type();
    Loss& loss = sequence || last == "log_softmax" ? *nll
                 : last == "sigmoid"               ? *dice
                 : last == "softmax"               ? *cross_entropy
                                                   : *mse;
    // A model without weights (identity) has nothing to train: its loss is finite.
    if (model.parameter_count() == 0) {
      CHECK(std::isfinite(loss_of(model, loss, x, y)));
      ++models;
      continue;
    }
    // The layers' state (dropout's step, batchnorm's running statistics) as it was before the
    // first forward is put back before the second, so both see the same dropout masks.
    std::vector<std::vector<char>> saved;
    auto states = [&] {
      std::vector<Tensor> all;
      for (std::size_t i = 0; i < model.num_layers(); ++i)
        for (auto& t : model.layer(i).state()) all.push_back(t);
      return all;
    };
    for (const Tensor& t : states())
      saved.emplace_back(static_cast<const char*>(t.raw()),
                         static_cast<const char*>(t.raw()) + t.bytes());
    const double before = loss_of(model, loss, x, y);
    model.zero_grad();
    model.backward(loss, y);
    // A step against the gradient of length 0.001 (deep batchnorm networks on a batch of 2 have
    // gradients of very different sizes, so a fixed learning rate would overshoot some), shorter
    // by 4 each time it does not lower the loss, down to 1e-8: for a correct gradient some short
    // step does (ResNet-1202's loss is too curved for the first ones; mobilenet's last batchnorms
    // see two values a channel, its gradient is about 1e6 long and a step of 4e-6 still rose
    // the loss by 0.006 where BLIS's packed kernels rounded its products).
    double norm2 = 0;
    for (const auto& p : model.parameters()) {
      std::int64_t finite = 0;
      for (std::int64_t i = 0; i < p.value.numel(); ++i) {
        const double g = p.grad.data<float>()[i];
        finite += std::isfinite(g);
        norm2 += g * g;
      }
      CHECK_MESSAGE(finite == p.value.numel(), p.name);
    }
    REQUIRE(norm2 > 0);
    auto step = [&](double length) {  // parameters -= length * gradient / |gradient|
      const auto lr = static_cast<float>(length / std::sqrt(norm2));
      for (const auto& p : model.parameters())
        for (std::int64_t i = 0; i < p.value.numel(); ++i)
          p.value.data<float>()[i] -= lr * p.grad.data<float>()[i];
      std::size_t k = 0;
      for (const Tensor& t : states()) std::memcpy(t.raw(), saved[k++].data(), t.bytes());
    };
    double after = before, length = 1e-3, taken = 0;
    for (; length >= 1e-8 && !(after < before); length /= 4) {
      step(length - taken);  // from the last try's point to this one's
      taken = length;
      after = loss_of(model, loss, x, y);
    }
    CAPTURE(length * 4);
    CHECK(std::isfinite(before));
    CHECK(after < before);
    ++models;
  }
  CHECK(models == static_cast<int>(rows.size()));
}
