#include "dtnn/rank_agreement.hpp"

#include <cstdint>
#include <map>

#include "dtnn/communicator.hpp"
#include "dtnn/digest.hpp"
#include "dtnn/error.hpp"

namespace dtnn {

using nlohmann::json;

namespace {

void flatten(const json& j, const std::string& prefix, RankFacts& out) {
  if (!j.is_object()) {
    out.emplace_back(prefix, j.dump());
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

bool per_rank(const std::string& key) {
  // A communicator's parameters (a rank, its certificate) are its own; its handshake checks the
  // world they make.
  return key == "training.threads" || key.starts_with("output.") || key == "dataset.path" ||
         (key.starts_with("parallel.communicator.") && key != "parallel.communicator.name") ||
         key == "training.resume" || key == "training.weights_and_bias_filename";
}

// A 64-bit digest as two doubles (32-bit halves are exact).
void put_digest(std::uint64_t h, double* out) {
  out[0] = static_cast<double>(h >> 32);
  out[1] = static_cast<double>(h & 0xffffffffu);
}

std::uint64_t digest_of(const std::string& text) { return fnv1a(text.data(), text.size()); }

}  // namespace

RankFacts experiment_facts(const json& config) {
  RankFacts all, kept;
  // The model object is one fact (its text): its keys are the model file's, not the experiment's.
  json rest = config;
  rest.erase("model");
  if (json* c = rest.contains("parallel") ? &rest["parallel"] : nullptr;
      c && c->contains("communicator") && (*c)["communicator"].is_string())
    (*c)["communicator"] = {{"name", (*c)["communicator"]}};  // a name alone: the same fact
  flatten(rest, "", all);
  for (auto& f : all)
    if (!per_rank(f.first)) kept.push_back(std::move(f));
  kept.emplace_back("model", config.value("model", json()).dump());
  return kept;
}

void check_ranks_agree(Communicator& comm, const RankFacts& facts, const std::string& what) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  if (ranks < 2) return;
  std::string text;
  for (const auto& [key, value] : facts) text += key + "=" + value + "\n";
  double mine[2];
  put_digest(digest_of(text), mine);
  std::vector<double> all(2 * ranks);
  comm.allgather(mine, all.data(), 2, DType::float64, "experiment digest");
  bool agree = true;
  for (std::size_t r = 1; r < ranks; ++r)
    agree = agree && all[2 * r] == all[0] && all[2 * r + 1] == all[1];
  if (agree) return;

  // They differ: rank 0's names travel to every rank, and every rank's digest of each value back.
  std::string names;
  for (const auto& f : facts) names += f.first + "\n";
  double length = static_cast<double>(names.size());
  comm.broadcast(&length, 1, DType::float64, 0, "experiment keys: length");
  std::vector<double> chars(static_cast<std::size_t>(length));
  if (comm.rank() == 0)
    for (std::size_t i = 0; i < chars.size(); ++i) chars[i] = static_cast<unsigned char>(names[i]);
  comm.broadcast(chars.data(), chars.size(), DType::float64, 0, "experiment keys");
  std::vector<std::string> keys(1);
  for (double c : chars) {
    if (c == '\n')
      keys.emplace_back();
    else
      keys.back() += static_cast<char>(c);
  }
  keys.pop_back();
  std::map<std::string, std::string> values(facts.begin(), facts.end());
  std::vector<double> local(2 * keys.size()), gathered(2 * keys.size() * ranks);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const auto it = values.find(keys[k]);
    put_digest(digest_of(it == values.end() ? std::string("\x01(absent)") : "=" + it->second),
               &local[2 * k]);
  }
  comm.allgather(local.data(), gathered.data(), local.size(), DType::float64, "experiment values");
  std::string report;
  int listed = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::string differing;
    for (std::size_t r = 1; r < ranks; ++r) {
      const double* theirs = &gathered[r * local.size() + 2 * k];
      const double* rank0 = &gathered[2 * k];
      if (theirs[0] != rank0[0] || theirs[1] != rank0[1])
        differing += (differing.empty() ? "" : ", ") + std::to_string(r);
    }
    if (differing.empty()) continue;
    if (++listed > 8) {
      report += "; and more";
      break;
    }
    const auto it = values.find(keys[k]);
    std::string here = it == values.end() ? "absent" : it->second;
    if (here.size() > 60) here = here.substr(0, 57) + "...";
    report += (report.empty() ? "" : "; ") + keys[k] + " differs on rank(s) " + differing +
              " from rank 0 (rank " + std::to_string(comm.rank()) + " has " + here + ")";
  }
  if (report.empty()) report = "rank(s) have keys that rank 0 lacks";
  throw Error(what + ": the ranks do not run the same experiment: " + report);
}

}  // namespace dtnn
