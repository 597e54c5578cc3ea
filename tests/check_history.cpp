// check_history FILE EPOCHS MIN_TEST_ACCURACY: validates a history file written by `dtnn run`.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

int fail(const std::string& why) {
  std::fprintf(stderr, "check_history: %s\n", why.c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: check_history FILE EPOCHS MIN_TEST_ACCURACY");
  std::ifstream in(argv[1]);
  if (!in) return fail(std::string(argv[1]) + ": cannot open");
  nlohmann::json h = nlohmann::json::parse(in, nullptr, false);
  if (h.is_discarded()) return fail("not valid JSON");
  const auto epochs = static_cast<std::size_t>(std::atoi(argv[2]));
  if (!h.contains("epochs") || h["epochs"].size() != epochs)
    return fail("expected " + std::string(argv[2]) + " epochs");
  auto fraction = [](const nlohmann::json& v) {
    return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1;
  };
  for (const auto& e : h["epochs"]) {
    for (const char* k : {"epoch", "loss", "val_loss", "seconds", "samples_per_second"})
      if (!e.contains(k) || !e[k].is_number())
        return fail(std::string("epoch entry lacks number ") + k);
    if (!fraction(e["categorical_accuracy"]) || !fraction(e["val_categorical_accuracy"]))
      return fail("epoch accuracies must be fractions in [0, 1]");
    if (e["samples_per_second"].get<double>() <= 0)
      return fail("samples_per_second must be positive");
  }
  if (!h.contains("test") || !h["test"]["loss"].is_number() ||
      !fraction(h["test"]["categorical_accuracy"]))
    return fail("test.loss / test.categorical_accuracy missing");
  if (!h["train_samples_per_second"].is_number() ||
      h["train_samples_per_second"].get<double>() <= 0)
    return fail("train_samples_per_second missing");
  const double acc = h["test"]["categorical_accuracy"].get<double>();
  if (acc < std::atof(argv[3]))
    return fail("test accuracy " + std::to_string(acc) + " below " + argv[3]);
  std::printf("history ok: %zu epoch(s), test accuracy %.4f, %.0f samples/s\n", epochs, acc,
              h["train_samples_per_second"].get<double>());
  return 0;
}
