// Model::summary: PyDTNN's model table.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dtnn/layer_profile.hpp"
#include "dtnn/model.hpp"
#include "format.hpp"

namespace dtnn {

namespace {

using detail::group_thousands;

// Summary tables right-align columns 0, 2 and 5 (the numbers).
std::string table(const std::vector<std::vector<std::string>>& rows) {
  return detail::format_table(rows, {0, 2, 5});
}

}  // namespace

std::string Model::summary() const {
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {"Layer", "Type", "#Params", "Output shape", "Weights shape", "Workspace", "Parameters"});
  rows.push_back({"0", "input", "0", input_shape_.str(), "", "", ""});
  std::size_t workspace = 0;
  for (std::size_t i = 0; i < num_layers(); ++i) {
    Layer& l = const_cast<Layer&>(layer(i));
    std::int64_t count = 0;
    for (const auto& p : l.parameters()) count += p.value.numel();
    workspace += l.workspace_bytes();
    rows.push_back(
        {std::to_string(i + 1), l.type(), group_thousands(count), l.output_shape().str(),
         l.weights_shape(),
         l.workspace_bytes() ? group_thousands(static_cast<std::int64_t>(l.workspace_bytes())) : "",
         l.attributes()});
  }
  std::int64_t total = parameter_count();
  std::int64_t bytes = total * static_cast<std::int64_t>(dtype_size(options_.dtype));
  char size[64];
  std::snprintf(size, sizeof size, "%.2f KiB", static_cast<double>(bytes) / 1024.0);
  std::string out = "Model: " + name_ + " (" + to_string(options_.dtype) + ", " +
                    to_string(options_.layout) + ")\n" + table(rows);
  out += "Total parameters: " + group_thousands(total) + " (" + group_thousands(bytes) +
         " bytes, " + size + ")\n";
  auto bytes_of = [](std::size_t n) { return group_thousands(static_cast<std::int64_t>(n)); };
  if (workspace_ && workspace)
    out += "Workspace: " + bytes_of(workspace_->bytes()) +
           " bytes, one buffer the layers share (the largest need; one per layer would take " +
           bytes_of(workspace) + ")\n";
  else if (workspace)
    out += "Workspace: " + bytes_of(workspace) + " bytes, each layer its own\n";
  return out;
}

namespace {

std::string mib(std::size_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return b;
}

}  // namespace

std::string Model::memory_table(std::size_t optimizer_state_bytes) const {
  const std::size_t value = dtype_size(options_.dtype);
  const auto batch = static_cast<std::size_t>(options_.max_batch);
  const auto parameters = static_cast<std::size_t>(parameter_count());
  const double state_per_parameter =
      parameters ? static_cast<double>(optimizer_state_bytes) / double(parameters) : 0.0;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"Layer", "Type", "Activations MiB", "Parameters MiB", "Gradients MiB",
                  "Optimizer MiB", "Total MiB"});
  std::size_t activations = 0;
  rows.push_back({"0", "input", mib(static_cast<std::size_t>(input_shape_.numel()) * batch * value),
                  "", "", "", ""});
  for (std::size_t i = 0; i < num_layers(); ++i) {
    Layer& l = const_cast<Layer&>(layer(i));
    std::size_t count = 0;
    for (const auto& p : l.parameters()) count += static_cast<std::size_t>(p.value.numel());
    // A reshape's output is a view of its input; one that the next layer writes over is that
    // layer's (counted there); one in the layer's own memory is in its inner activations.
    const std::size_t out = chain_.held_bytes(i) + l.inner_activation_bytes(),
                      weights = count * value,
                      state = static_cast<std::size_t>(state_per_parameter * double(count));
    activations += out;
    rows.push_back({std::to_string(i + 1), l.type(), mib(out), mib(weights), mib(weights),
                    mib(state), mib(out + 2 * weights + state)});
  }
  const std::size_t weights = parameters * value,
                    input = static_cast<std::size_t>(input_shape_.numel()) * batch * value;
  std::size_t workspace = shared_workspace_bytes();
  if (!workspace_)
    for (std::size_t i = 0; i < num_layers(); ++i) workspace += layer(i).workspace_bytes();
  const std::size_t gradient_buffers = gradient_buffers_.bytes();
  // With bf16 saved activations: the float32 outputs in their levels' shared forward buffers.
  const std::size_t forward_buffers = gradient_buffers_.forward_bytes();
  activations += forward_buffers;
  const std::size_t total =
      input + activations + 2 * weights + optimizer_state_bytes + workspace + gradient_buffers;
  return "Memory in training (batch " + std::to_string(options_.max_batch) +
         "; a block's row holds its paths' outputs too" +
         (options_.saved_activations == Precision::bf16
              ? "; activations kept for backward as bf16 copies"
              : "") +
         "):\n" + detail::format_table(rows, {0, 2, 3, 4, 5, 6}) + "Total memory: " + mib(total) +
         " MiB (activations " + mib(input + activations) +
         (forward_buffers ? " of which shared forward buffers " + mib(forward_buffers) : "") +
         ", parameters " + mib(weights) + ", gradients " + mib(weights) + ", optimizer state " +
         mib(optimizer_state_bytes) + ", workspace " + mib(workspace) + ", activation gradients " +
         mib(gradient_buffers) + ")\n";
}

std::string Model::profile_table() const {
  std::vector<layer_profile::Tally> tallies;
  double total = 0;
  for (std::size_t i = 0; i < num_layers(); ++i) {
    tallies.push_back(layer_profile::of(layer(i)));
    total += tallies.back().forward + tallies.back().backward;
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"Layer", "Type", "forward ms", "backward ms", "share"});
  auto ms = [](double s, std::int64_t calls) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4f", calls ? 1e3 * s / static_cast<double>(calls) : 0.0);
    return std::string(b);
  };
  for (std::size_t i = 0; i < tallies.size(); ++i) {
    const layer_profile::Tally& t = tallies[i];
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%",
                  total > 0 ? 100.0 * (t.forward + t.backward) / total : 0.0);
    rows.push_back({std::to_string(i + 1), layer(i).type(), ms(t.forward, t.forward_calls),
                    ms(t.backward, t.backward_calls), share});
  }
  return table(rows) + "By kind of layer, blocks' layers included:\n" + layer_profile::table();
}

}  // namespace dtnn
