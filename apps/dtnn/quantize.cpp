// dtnn quantize EXP.json --weights FILE [--calibration-batches N] [--output FILE.int8]
//               [--no-evaluate]
// Post-training quantisation (docs/precision.md, "int8 inference"): the experiment's model with
// the trained weights, its conv2d and fc products quantised to int8, written as an int8 model
// that `dtnn run EXP.json --evaluate-only --weights-and-bias-filename FILE.int8` evaluates.
// Calibration runs N batches of the training set (training.eval_batch_size samples each,
// normalised as evaluation is) through the float model, each product noting the largest |x| its
// input reached. Unless --no-evaluate, the test set is evaluated in float32 and in int8, and both
// results printed.
#include <boost/program_options.hpp>
#include <cstdio>

#include "command_support.hpp"
#include "dtnn/checked.hpp"
#include "dtnn/config.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/int8_gemm.hpp"
#include "dtnn/int8_model.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/model.hpp"
#include "dtnn/trainer.hpp"

namespace dtnn_cli {

namespace po = boost::program_options;

namespace {

void print_result(const char* what, const dtnn::EvalResult& r) {
  std::printf("  %-8s loss %.4f", what, r.loss);
  for (const auto& [name, value] : r.metrics) std::printf("  %s %.4f", name.c_str(), value);
  std::printf("  (%lld samples in %.2f s, %.0f samples/s)\n", static_cast<long long>(r.samples),
              r.seconds, r.seconds > 0 ? double(r.samples) / r.seconds : 0.0);
}

}  // namespace

int cmd_quantize(const std::vector<std::string>& args) {
  std::string config_file, weights, output;
  std::int64_t batches = 10;
  std::vector<std::string> sets;
  Common common;
  po::options_description desc("quantize options");
  desc.add_options()("help,h", "show this help")("config", po::value(&config_file),
                                                 "experiment file (the first argument)")(
      "weights", po::value(&weights),
      "the trained weights: a checkpoint (file or folder) or a PyDTNN .npz")(
      "calibration-batches", po::value(&batches),
      "training batches (training.eval_batch_size each) that set the input scales (default 10)")(
      "output,o", po::value(&output), "the int8 model to write (default: WEIGHTS.int8)")(
      "no-evaluate", "do not evaluate the test set in float32 and int8")(
      "set,s", po::value(&sets)->composing(), "override a config key (repeatable)")(
      "plugin-path", po::value(&common.plugin_path)->composing(), "extra plugin folder");
  const po::variables_map vm = parse_with_config(args, desc);
  if (print_help(vm, desc, "dtnn quantize EXP.json --weights FILE [options]")) return 0;
  if (config_file.empty()) throw UsageError("dtnn quantize: give an experiment file");
  if (weights.empty()) throw UsageError("dtnn quantize: give the trained weights (--weights FILE)");
  if (batches < 1 || batches > 1'000'000)
    throw UsageError("--calibration-batches: expected 1 to 1000000");
  weights = weights_file(weights);
  if (dtnn::is_int8_model_file(weights))
    throw UsageError("--weights: " + weights + " is already an int8 model");
  if (output.empty()) output = weights + ".int8";
  dtnn::check_output_file(output, "--output");

  for (const std::string& s : std::vector<std::string>{
           "training.epochs=0", "training.evaluate=false", "output.progress=\"none\"",
           "parallel.communicator=\"local\"", "output.history=\"\"", "output.checkpoint_dir=\"\"",
           "output.weights_npz=\"\"", "training.weights_and_bias_filename=\"\"",
           "training.resume=\"\""})
    sets.push_back(s);
  const dtnn::ExperimentConfig config = dtnn::load_experiment(config_file, sets);
  dtnn::Registry registry = common.registry();
  dtnn::Experiment experiment(config, registry);
  dtnn::Model& model = experiment.model();
  if (model.options().device != dtnn::Device::cpu || model.options().dtype != dtnn::DType::float32)
    throw dtnn::Error(config_file + ": int8 models are made from float32 models on the cpu");
  load_weights(model, weights);
  const std::vector<dtnn::Int8ProductRef> products = dtnn::int8_products(model);
  if (products.empty())
    throw dtnn::Error(config_file + ": model '" + model.name() +
                      "' has no layer that runs in int8 (conv2d with groups 1, fc)");

  dtnn::Trainer& trainer = experiment.trainer();
  const std::int64_t per_batch = trainer.options().eval_batch_size;
  const std::int64_t samples = std::min(
      dtnn::checked_mul(batches, per_batch).value_or(trainer.train_size()), trainer.train_size());
  if (samples < 1)
    throw dtnn::Error(config_file + ": the training set is empty: nothing to calibrate on");
  for (const auto& p : products)
    p.product->set_observing(true, "layer " + p.layer + " (" + p.owner->type() + ")");
  const dtnn::EvalResult calibration = trainer.evaluate(dtnn::Split::train, 0, samples);
  for (const auto& p : products) p.product->set_observing(false);
  std::printf("calibration: %lld training samples in %.2f s\n",
              static_cast<long long>(calibration.samples), calibration.seconds);

  const bool evaluate = !vm.count("no-evaluate") && trainer.test_size() > 0;
  dtnn::EvalResult before;
  if (evaluate) before = trainer.evaluate(dtnn::Split::test, 0, trainer.test_size());
  std::printf("%-14s %-8s %14s %12s\n", "layer", "type", "product", "input range");
  for (const auto& p : products) {
    p.product->quantize(p.product->range());
    std::printf("%-14s %-8s %14s %12.4g\n", p.layer.c_str(), p.owner->type().c_str(),
                (std::to_string(p.product->k()) + " x " + std::to_string(p.product->n())).c_str(),
                p.product->range());
  }
  if (evaluate) {
    const dtnn::EvalResult after = trainer.evaluate(dtnn::Split::test, 0, trainer.test_size());
    std::printf("test set (int8 products: %s):\n", dtnn::int8_gemm_path());
    print_result("float32", before);
    print_result("int8", after);
  }
  const std::string bytes = dtnn::encode_int8_model(model);
  dtnn::write_file_atomically(output, bytes);
  std::printf("wrote %s (%zu int8 products, %.1f KiB)\n", output.c_str(), products.size(),
              double(bytes.size()) / 1024.0);
  return 0;
}

}  // namespace dtnn_cli
