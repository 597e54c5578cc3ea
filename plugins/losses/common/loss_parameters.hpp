// The parameters (with their defaults) that a CPU loss and its CUDA twin declare alike, in one
// place so that the twins cannot drift apart (tests/test_registry.cpp checks that they agree).
#pragma once

namespace dtnn::loss_parameters {

// nll and cross_entropy (the log-likelihood of log-probabilities, or of logits' log_softmax).
inline constexpr const char* kLogLikelihoodParameters = R"({"ignore_index": -1, "weights": []})";
inline constexpr const char* kDiceParameters = R"({"smooth": 1.0})";
inline constexpr const char* kKlDivergenceParameters =
    R"({"label_smoothing": 0.0, "ignore_index": -1})";

}  // namespace dtnn::loss_parameters
