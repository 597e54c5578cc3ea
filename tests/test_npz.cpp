// .npz archives: round trips, NumPy's own files read (np.savez_compressed: deflated members) and
// ours read by NumPy, and PyDTNN-named model weights moved between layouts and fusions.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "dtnn/dataset.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "dtnn/npz.hpp"
#include "dtnn/pydtnn_weights.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

NpyArray array_of(DType dtype, std::vector<std::int64_t> shape, double base) {
  NpyArray a;
  a.dtype = dtype;
  a.item_size = static_cast<int>(dtype_size(dtype));
  a.shape = std::move(shape);
  a.data.resize(static_cast<std::size_t>(a.numel()) * dtype_size(dtype));
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    if (dtype == DType::float32)
      reinterpret_cast<float*>(a.data.data())[i] = static_cast<float>(base + i);
    else
      reinterpret_cast<double*>(a.data.data())[i] = base + i * 0.5;
  }
  return a;
}

int python(const std::string& script) {
  const fs::path file = test::temp_dir("npz-py") / "script.py";
  std::ofstream(file) << script;
  return std::system(("/usr/bin/python3 " + file.string()).c_str());
}

}  // namespace

TEST_CASE("npz: arrays written are read back, in order, float32 and float64") {
  const fs::path file = test::temp_dir("npz-roundtrip") / "a.npz";
  std::vector<std::pair<std::string, NpyArray>> arrays{
      {"1_Conv2D_weights", array_of(DType::float32, {4, 3, 3, 3}, 1)},
      {"1_Conv2D_biases", array_of(DType::float64, {4}, -2)},
      {"scalar_like", array_of(DType::float32, {1}, 7)}};
  write_npz(file, arrays);
  const auto back = read_npz(file);
  REQUIRE(back.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(back[i].first == arrays[i].first);
    CHECK(back[i].second.dtype == arrays[i].second.dtype);
    CHECK(back[i].second.shape == arrays[i].second.shape);
    CHECK(back[i].second.data == arrays[i].second.data);
  }
}

TEST_CASE("npz: NumPy reads ours, and we read NumPy's compressed files") {
  const fs::path dir = test::temp_dir("npz-numpy");
  write_npz(dir / "ours.npz",
            {{"w", array_of(DType::float32, {2, 3}, 1)}, {"b", array_of(DType::float64, {3}, 0)}});
  CHECK(python("import numpy as np\n"
               "d = np.load('" +
               (dir / "ours.npz").string() +
               "')\n"
               "assert d['w'].dtype == np.float32 and d['w'].shape == (2, 3)\n"
               "assert (d['w'] == np.arange(1, 7, dtype=np.float32).reshape(2, 3)).all()\n"
               "assert d['b'].dtype == np.float64 and list(d['b']) == [0, 0.5, 1.0]\n"
               "np.savez_compressed('" +
               (dir / "theirs.npz").string() +
               "',\n"
               "    big=np.linspace(-1, 1, 3000, dtype=np.float32).reshape(30, 100),\n"
               "    small=np.array([3.5], dtype=np.float64))\n") == 0);
  const auto theirs = read_npz(dir / "theirs.npz");
  REQUIRE(theirs.size() == 2);
  CHECK(theirs[0].first == "big");
  CHECK(theirs[0].second.shape == std::vector<std::int64_t>{30, 100});
  const auto* big = reinterpret_cast<const float*>(theirs[0].second.data.data());
  CHECK(big[0] == -1.0f);
  CHECK(big[2999] == 1.0f);
  CHECK(big[1500] == doctest::Approx(-1.0 + 2.0 * 1500 / 2999));
  CHECK(reinterpret_cast<const double*>(theirs[1].second.data.data())[0] == 3.5);
}

TEST_CASE("npz: truncated and corrupt archives are refused, naming the file") {
  const fs::path dir = test::temp_dir("npz-bad");
  write_npz(dir / "good.npz", {{"w", array_of(DType::float32, {5, 5}, 1)}});
  std::ifstream in(dir / "good.npz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "cut.npz", std::ios::binary).write(bytes.data(), 100);
  CHECK(test::error_of([&] { read_npz(dir / "cut.npz"); }).find("cut.npz: not a zip") !=
        std::string::npos);
  std::string flipped = bytes;
  flipped[150] = static_cast<char>(flipped[150] ^ 0x40);  // inside the array's data
  std::ofstream(dir / "flipped.npz", std::ios::binary)
      .write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
  CHECK(test::error_of([&] { read_npz(dir / "flipped.npz"); }).find("w.npy: CRC-32 mismatch") !=
        std::string::npos);
}

TEST_CASE(
    "PyDTNN weights: keys and shapes, NHWC to NCHW and fused to unfused give the same model") {
  const json spec = json::parse(R"({"layers": [
    {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1}, {"type": "batchnorm"}, {"type": "relu"},
    {"type": "add", "paths": [[{"type": "conv2d", "filters": 4, "kernel": 1, "use_bias": false}], []]},
    {"type": "maxpool2d"}, {"type": "flatten"}, {"type": "fc", "units": 5}, {"type": "softmax"}]})");
  auto build = [&](Layout layout, bool fused) {
    ModelOptions o;
    o.dtype = DType::float64;
    o.layout = layout;
    o.max_batch = 3;
    o.seed = fused ? 99 : 5;  // different initial weights: the file must carry them over
    if (fused) o.fusions = {"conv_batchnorm_relu"};
    return Model(parse_model_spec(spec, "test"), o,
                 layout == Layout::nhwc ? Shape{4, 6, 2} : Shape{2, 4, 6}, test::plugins());
  };
  Model a = build(Layout::nhwc, false);
  // Train a step so that the running statistics are not their initial values.
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  Tensor x = Tensor::empty(Shape{3, 4, 6, 2}, DType::float64, Layout::nhwc);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = std::cos(0.3 * double(i));
  Tensor y = Tensor::zeros(Shape{3, 5}, DType::float64);
  for (int n = 0; n < 3; ++n) y.data<double>()[n * 5 + n] = 1;
  a.forward(x, Mode::train);
  a.backward(*loss, y);
  const fs::path file = test::temp_dir("pydtnn-weights") / "w.npz";
  save_pydtnn_weights(a, file);

  std::vector<std::string> keys;
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& [k, arr] : read_npz(file)) {
    keys.push_back(k);
    shapes[k] = arr.shape;
  }
  CHECK(keys == std::vector<std::string>{"1_Conv2D_weights", "1_Conv2D_biases",
                                         "2_BatchNormalization_gamma", "2_BatchNormalization_beta",
                                         "2_BatchNormalization_running_mean",
                                         "2_BatchNormalization_running_var", "5_Conv2D_weights",
                                         "8_FC_weights", "8_FC_biases"});
  CHECK(shapes["1_Conv2D_weights"] == std::vector<std::int64_t>{4, 2, 3, 3});
  CHECK(shapes["8_FC_weights"] == std::vector<std::int64_t>{24, 5});

  Tensor xc = Tensor::empty(Shape{3, 2, 4, 6}, DType::float64, Layout::nchw);  // x in NCHW
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 2; ++c)
      for (int p = 0; p < 24; ++p)
        xc.data<double>()[(n * 2 + c) * 24 + p] = x.data<double>()[(n * 24 + p) * 2 + c];
  const Tensor expected = a.forward(x, Mode::eval);
  for (bool fused : {false, true}) {
    CAPTURE(fused);
    Model b = build(Layout::nchw, fused);
    load_pydtnn_weights(b, file);
    const Tensor& got = b.forward(xc, Mode::eval);
    for (std::int64_t i = 0; i < got.numel(); ++i)
      CHECK(got.data<double>()[i] == doctest::Approx(expected.data<double>()[i]).epsilon(1e-12));
  }
}

TEST_CASE("PyDTNN weights: a missing array or a wrong shape is refused and changes nothing") {
  const json spec = json::parse(R"({"layers": [{"type": "flatten"}, {"type": "fc", "units": 3}]})");
  ModelOptions o;
  Model m(parse_model_spec(spec, "test"), o, Shape{4}, test::plugins());
  const fs::path dir = test::temp_dir("pydtnn-bad");
  write_npz(dir / "shape.npz", {{"2_FC_weights", array_of(DType::float32, {3, 4}, 0)},
                                {"2_FC_biases", array_of(DType::float32, {3}, 0)}});
  const Tensor w = m.parameters()[0].value;
  const float before = w.data<float>()[0];
  CHECK(test::error_of([&] {
          load_pydtnn_weights(m, dir / "shape.npz");
        }).find("shape.npz: 2_FC_weights has shape (3, 4), the model needs (4, 3)") !=
        std::string::npos);
  write_npz(dir / "missing.npz", {{"2_FC_weights", array_of(DType::float64, {4, 3}, 0)}});
  CHECK(test::error_of([&] {
          load_pydtnn_weights(m, dir / "missing.npz");
        }).find("missing.npz: no array '2_FC_biases'") != std::string::npos);
  CHECK(w.data<float>()[0] == before);
}

TEST_CASE("npz dataset: NumPy's uint8 images and int64 labels, in both file layouts") {
  const fs::path dir = test::temp_dir("npz-dataset");
  // 6 training and 2 test images of 2x3 pixels with 4 channels; value (n, y, x, c) =
  // n * 24 + (y * 3 + x) * 4 + c; labels n % 3.
  REQUIRE(
      python(
          "import numpy as np\n"
          "def imgs(n): return np.arange(n * 24, dtype=np.uint8).reshape(n, 2, 3, 4)\n"
          "d = '" +
          dir.string() +
          "'\n"
          "for name, t in (('nhwc', lambda a: a), ('nchw', lambda a: a.transpose(0, 3, 1, 2))):\n"
          "    np.savez_compressed(d + '/' + name + '.npz', x_train=t(imgs(6)),\n"
          "        y_train=np.arange(6) % 3, x_test=t(imgs(2)), y_test=np.array([2, 0]))\n"
          "np.savez(d + '/bad_label.npz', x_train=imgs(6), y_train=np.array([0, 1, 2, 7, 0, 1]),\n"
          "    x_test=imgs(2), y_test=np.array([0, 1]))\n"
          "np.savez(d + '/no_test.npz', x_train=imgs(6), y_train=np.arange(6) % 3)\n") == 0);
  auto open_npz = [&](const std::string& file, const std::string& layout, int classes = 0) {
    return test::plugins().create_as<Dataset>(
        "dataset", "npz",
        Params(json{{"path", (dir / file).string()}, {"layout", layout}, {"classes", classes}},
               "exp.json: dataset"));
  };
  for (const auto& [file, layout] :
       {std::pair{"nhwc.npz", "NHWC"}, std::pair{"nchw.npz", "NCHW"}}) {
    CAPTURE(file);
    auto ds = open_npz(file, layout);
    CHECK(ds->size(Split::train) == 6);
    CHECK(ds->size(Split::test) == 2);
    CHECK(ds->num_classes() == 3);
    CHECK(ds->sample_shape(Layout::nhwc) == Shape{2, 3, 4});
    for (Layout l : {Layout::nhwc, Layout::nchw}) {
      Tensor x = Tensor::empty(ds->sample_shape(l).with_batch(1), DType::float32, l);
      Tensor y = Tensor::empty(Shape{1, 3}, DType::float32);
      const std::vector<std::int64_t> id{4};
      ds->read(Split::train, id, x, y);
      // Pixel (y, x), channel c of image 4: 4 * 24 + (y * 3 + x) * 4 + c.
      for (const auto [py, px, c] :
           {std::array{1, 2, 3}, std::array{0, 1, 2}, std::array{1, 0, 0}}) {
        const std::int64_t at = l == Layout::nhwc ? (py * 3 + px) * 4 + c : c * 6 + py * 3 + px;
        CHECK(x.data<float>()[at] == doctest::Approx((96.0 + (py * 3 + px) * 4 + c) / 255.0));
      }
      CHECK(y.data<float>()[1] == 1.0f);  // 4 % 3
    }
  }
  CHECK(test::error_of([&] {
          open_npz("bad_label.npz", "NHWC", 3);
        }).find("bad_label.npz: y_train[3] = 7.000000: expected a class index in 0..2") !=
        std::string::npos);
  CHECK(test::error_of([&] {
          open_npz("no_test.npz", "NHWC");
        }).find("no_test.npz: no array 'x_test'") != std::string::npos);
}

TEST_CASE("npz dataset: regression targets (targets \"values\") taken as they are, and learnt") {
  // x (N, 2) in [0, 1), y = 2 x0 - x1 + 0.5: shape (N,) for one target, (N, 2) for two.
  auto arrays = [](std::int64_t n, int targets) {
    NpyArray x = array_of(DType::float32, {n, 2}, 0), y = array_of(DType::float64, {n, targets}, 0);
    if (targets == 1) y.shape = {n};
    for (std::int64_t i = 0; i < n; ++i) {
      const float a = float(i % 7) / 7.0f, b = float(i % 5) / 5.0f;
      reinterpret_cast<float*>(x.data.data())[2 * i] = a;
      reinterpret_cast<float*>(x.data.data())[2 * i + 1] = b;
      for (int k = 0; k < targets; ++k)
        reinterpret_cast<double*>(y.data.data())[i * targets + k] = 2.0 * a - b + 0.5 + k;
    }
    return std::pair{x, y};
  };
  const fs::path dir = test::temp_dir("npz-values");
  for (int targets : {1, 2}) {
    auto [xtr, ytr] = arrays(70, targets);
    auto [xte, yte] = arrays(14, targets);
    write_npz(dir / ("r" + std::to_string(targets) + ".npz"),
              {{"x_train", xtr}, {"y_train", ytr}, {"x_test", xte}, {"y_test", yte}});
  }
  auto open = [&](const std::string& file, json more = json::object()) {
    json params = {{"path", (dir / file).string()}, {"targets", "values"}};
    params.update(more);
    return test::plugins().create_as<Dataset>("dataset", "npz",
                                              Params(params, "exp.json: dataset"));
  };
  auto two = open("r2.npz");
  CHECK(two->value_labels());
  CHECK(two->num_classes() == 2);
  Tensor x = Tensor::empty(Shape{1, 2}, DType::float32),
         y = Tensor::empty(Shape{1, 2}, DType::float32);
  const std::vector<std::int64_t> id{9};  // a = 2/7, b = 4/5
  two->read(Split::train, id, x, y);
  CHECK(y.data<float>()[0] == doctest::Approx(2.0 * 2 / 7 - 0.8 + 0.5));
  CHECK(y.data<float>()[1] == doctest::Approx(2.0 * 2 / 7 - 0.8 + 1.5));
  CHECK(open("r1.npz")->num_classes() == 1);
  CHECK(test::error_of([&] {
          open("r2.npz", {{"classes", 3}});
        }).find("classes: expected 0 or y_train's 2 target columns") != std::string::npos);
  CHECK(test::error_of([&] {
          open("r2.npz", {{"targets", "numbers"}});
        }).find("targets: expected \"classes\"") != std::string::npos);

  json config = json::parse(R"({"model": {"layers": [{"type": "fc", "units": 1}]},
    "loss": "mse", "metrics": ["regression_mse"],
    "training": {"batch_size": 10, "epochs": 40}, "optimizer": {"name": "adam", "learning_rate": 0.05},
    "output": {"progress": "none"}})");
  config["dataset"] = {{"name", "npz"}, {"path", (dir / "r1.npz").string()}, {"targets", "values"}};
  const History h = Experiment(make_experiment(config, {}, "test"), test::plugins()).run();
  REQUIRE(h.test);
  MESSAGE("test mse " << h.test_before->loss << " -> " << h.test->loss);
  CHECK(h.test->metrics.at("regression_mse") < 1e-3);
}

TEST_CASE("PyDTNN 3.x's archive dataset: npz with its defaults (NCHW x, y as it is)") {
  // Two 2-channel 3x4 images per split, NCHW; y two values each.
  const fs::path file = test::temp_dir("npz-archive") / "data.npz";
  write_npz(file, {{"x_train", array_of(DType::float64, {2, 2, 3, 4}, 0)},
                   {"y_train", array_of(DType::float64, {2, 2}, 0)},
                   {"x_test", array_of(DType::float64, {2, 2, 3, 4}, 0)},
                   {"y_test", array_of(DType::float64, {2, 2}, 0)}});
  auto open = [&](const std::string& name) {
    return test::plugins().create_as<Dataset>(
        "dataset", name, Params(json{{"path", file.string()}}, "exp.json: dataset"));
  };
  auto archive = open("archive");
  CHECK(archive->sample_shape(Layout::nhwc) == Shape{3, 4, 2});  // read as NCHW
  CHECK(archive->value_labels());
  Tensor x = Tensor::empty(Shape{1, 3, 4, 2}, DType::float32),
         y = Tensor::empty(Shape{1, 2}, DType::float32);
  const std::vector<std::int64_t> first{1};
  archive->read(Split::train, first, x, y);
  CHECK(y.data<float>()[1] == doctest::Approx(1.5));              // y_train[1, 1] as it is
  CHECK(x.data<float>()[1] == doctest::Approx((24 + 12) * 0.5));  // pixel 0, channel 1
  // The same file as npz takes its own defaults (NHWC: 2x3 images of 4 channels), and a value
  // given in the config wins over the alias's.
  CHECK(open("npz")->sample_shape(Layout::nhwc) == Shape{2, 3, 4});
  auto given = test::plugins().create_as<Dataset>(
      "dataset", "archive",
      Params(json{{"path", file.string()}, {"layout", "NHWC"}}, "exp.json: dataset"));
  CHECK(given->sample_shape(Layout::nhwc) == Shape{2, 3, 4});
}
