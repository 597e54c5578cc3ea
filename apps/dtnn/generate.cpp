// dtnn generate EXP.json --weights FILE --prompt "..." [--tokens N] [--temperature T]
//               [--top-k K] [--seed S]
// Samples text from a trained language model (a model of a token dataset, ending in log_softmax
// or softmax): the prompt is encoded with the dataset's tokenizer, and each new token is drawn
// from the model's distribution at the last position; temperature 0 takes the most likely one.
// With an encoder-decoder (a sequence-pair dataset) the prompt is the source: the decoder starts
// from <s> and draws the target token by token until </s>, the target length or --tokens.
//
// No KV cache: each token runs the model over its whole context again (the last `context`
// tokens, the rest of the window padded; causal attention keeps the padding from mattering).
// A position's output depends only on the ones before it, so this is exact; its cost is one
// forward of `context` positions per token (docs/transformers.md gives the measured rate).
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "command_support.hpp"
#include "dtnn/config.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/model.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/tokenizer.hpp"

namespace dtnn_cli {

namespace po = boost::program_options;

namespace {

// A token drawn from one position's scores (log-probabilities, or probabilities when the model
// ends in softmax): the most likely at temperature 0, else from softmax(log p / temperature)
// over the top_k most likely (0: all).
std::int64_t sample(std::vector<double> logp, double temperature, std::int64_t top_k,
                    dtnn::Rng& rng) {
  const auto best = std::max_element(logp.begin(), logp.end()) - logp.begin();
  if (temperature == 0) return best;
  std::vector<std::int64_t> order(logp.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return logp[a] > logp[b]; });
  if (top_k > 0 && top_k < static_cast<std::int64_t>(order.size())) order.resize(top_k);
  std::vector<double> weight(order.size());
  double total = 0;
  for (std::size_t i = 0; i < order.size(); ++i)
    total += weight[i] = std::exp((logp[order[i]] - logp[best]) / temperature);
  double pick = rng.uniform() * total;
  for (std::size_t i = 0; i < order.size(); ++i)
    if ((pick -= weight[i]) < 0) return order[i];
  return order.back();
}

// Log-probabilities of every class at output position `position` of the model on x (one sample).
std::vector<double> scores_at(dtnn::Model& model, const dtnn::Tensor& x, std::int64_t position,
                              std::int64_t classes) {
  std::vector<double> scores(static_cast<std::size_t>(classes));
  dtnn::dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    const dtnn::Tensor out =
        model.forward(x.to(model.options().device), dtnn::Mode::eval).to(dtnn::Device::cpu);
    const T* row = out.data<T>() + position * classes;
    const bool probabilities = model.ends_in_softmax();
    for (std::int64_t c = 0; c < classes; ++c)
      scores[static_cast<std::size_t>(c)] =
          probabilities ? std::log(std::max(double(row[c]), 1e-300)) : double(row[c]);
  });
  return scores;
}

// x[0, at] = id, in x's dtype.
void put(dtnn::Tensor& x, std::int64_t at, std::int64_t id) {
  dtnn::dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    x.data<T>()[at] = T(id);
  });
}

struct Sampling {
  std::int64_t tokens;
  double temperature;
  std::int64_t top_k;
  dtnn::Rng rng;
};

// An encoder-decoder's output for the source `prompt`: x = [source, padded | <s>, the target so
// far, padded]; decoder position k gives target token k.
void translate(dtnn::Model& model, const dtnn::Dataset& dataset, const std::string& prompt,
               dtnn::Tensor& x, Sampling& sampling) {
  const dtnn::Tokenizer& tokenizer = *dataset.tokenizer();
  const std::int64_t source = dataset.source_length();
  const std::int64_t target = x.dim(1) - source;
  const std::vector<std::int64_t> ids = tokenizer.encode(prompt);
  if (static_cast<std::int64_t>(ids.size()) > source)
    throw UsageError("--prompt: " + std::to_string(ids.size()) +
                     " tokens; the model's source holds " + std::to_string(source));
  for (std::size_t t = 0; t < ids.size(); ++t) put(x, static_cast<std::int64_t>(t), ids[t]);
  put(x, source, tokenizer.start_id());
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < std::min(sampling.tokens, target); ++k) {
    const std::int64_t next = sample(scores_at(model, x, k, dataset.num_classes()),
                                     sampling.temperature, sampling.top_k, sampling.rng);
    if (next == tokenizer.end_id()) break;
    out.push_back(next);
    if (k + 1 < target) put(x, source + k + 1, next);
  }
  std::printf("%s\n", tokenizer.decode(out).c_str());
}

}  // namespace

int cmd_generate(const std::vector<std::string>& args) {
  std::string config_file, weights, prompt;
  std::int64_t tokens = 200, top_k = 0;
  double temperature = 1.0;
  std::uint64_t seed = 1;
  std::vector<std::string> sets;
  Common common;
  po::options_description desc("generate options");
  desc.add_options()("help,h", "show this help")("config", po::value(&config_file),
                                                 "experiment file (the first argument)")(
      "weights", po::value(&weights),
      "the trained weights: a checkpoint (file or folder) or a PyDTNN .npz")(
      "prompt", po::value(&prompt),
      "the text to continue (at least one token); an encoder-decoder's source")(
      "tokens", po::value(&tokens), "tokens to generate (default 200)")(
      "temperature", po::value(&temperature),
      "sampling temperature (default 1; 0: always the most likely token)")(
      "top-k", po::value(&top_k), "sample among the k most likely tokens only (0: all)")(
      "seed", po::value(&seed), "seed of the sampling (default 1)")(
      "set,s", po::value(&sets)->composing(), "override a config key (repeatable)")(
      "plugin-path", po::value(&common.plugin_path)->composing(), "extra plugin folder");
  const po::variables_map vm = parse_with_config(args, desc);
  if (print_help(vm, desc, "dtnn generate EXP.json --weights FILE --prompt TEXT [options]"))
    return 0;
  if (config_file.empty()) throw UsageError("dtnn generate: give an experiment file");
  if (weights.empty()) throw UsageError("dtnn generate: give the trained weights (--weights FILE)");
  if (prompt.empty()) throw UsageError("dtnn generate: give a prompt (--prompt TEXT)");
  if (tokens < 0 || tokens > 1'000'000) throw UsageError("--tokens: expected 0 to 1000000");
  if (!(temperature >= 0) || !std::isfinite(temperature))
    throw UsageError("--temperature: expected a number >= 0");
  if (top_k < 0) throw UsageError("--top-k: expected an integer >= 0");

  // The experiment's dataset (its tokenizer) and model, with the weights, for one sequence.
  weights = weights_file(weights);
  for (const std::string& s : std::vector<std::string>{
           "training.batch_size=1", "training.eval_batch_size=1", "training.epochs=0",
           "training.evaluate=false", "dataset.validation_split=0", "output.progress=\"none\"",
           "parallel.communicator=\"local\"", "output.history=\"\"", "output.checkpoint_dir=\"\"",
           "training.weights_and_bias_filename=\"\"", "training.resume=\"\""})
    sets.push_back(s);
  const dtnn::ExperimentConfig config = dtnn::load_experiment(config_file, sets);
  dtnn::Registry registry = common.registry();
  dtnn::Experiment experiment(config, registry);
  const dtnn::Dataset& dataset = experiment.dataset();
  const dtnn::Tokenizer* tokenizer = dataset.tokenizer();
  if (!tokenizer || !dataset.class_id_labels())
    throw dtnn::Error(config_file + ": dataset '" +
                      config.json["dataset"]["name"].get<std::string>() +
                      "' is not a token dataset: dtnn generate needs a language model's");
  dtnn::Model& model = experiment.model();
  load_weights(model, weights);
  const std::int64_t context = dataset.sample_shape(model.options().layout)[0];
  const std::int64_t classes = dataset.num_classes();

  const dtnn::DType dtype = model.options().dtype;
  dtnn::Tensor x = dtnn::Tensor::zeros(dataset.sample_shape(model.options().layout).with_batch(1),
                                       dtype, model.options().layout);
  Sampling sampling{tokens, temperature, top_k, dtnn::Rng(seed)};
  const auto start = std::chrono::steady_clock::now();
  if (dataset.source_length() > 0) {
    translate(model, dataset, prompt, x, sampling);
    return 0;
  }
  std::vector<std::int64_t> text = tokenizer->encode(prompt);
  if (text.empty()) throw UsageError("dtnn generate: the prompt encodes to no token");
  std::fputs(prompt.c_str(), stdout);
  std::fflush(stdout);
  for (std::int64_t k = 0; k < tokens; ++k) {
    const std::int64_t used =
        std::min<std::int64_t>(context, static_cast<std::int64_t>(text.size()));
    const std::int64_t first = static_cast<std::int64_t>(text.size()) - used;
    for (std::int64_t t = 0; t < context; ++t)
      put(x, t, t < used ? text[static_cast<std::size_t>(first + t)] : 0);
    const std::int64_t next =
        sample(scores_at(model, x, used - 1, classes), temperature, top_k, sampling.rng);
    text.push_back(next);
    std::fputs(tokenizer->decode(std::span<const std::int64_t>(&next, 1)).c_str(), stdout);
    std::fflush(stdout);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n");
  std::fprintf(stderr, "dtnn generate: %lld tokens in %.2f s (%.1f tokens/s, context %lld)\n",
               static_cast<long long>(tokens), seconds,
               seconds > 0 ? double(tokens) / seconds : 0.0, static_cast<long long>(context));
  return 0;
}

}  // namespace dtnn_cli
