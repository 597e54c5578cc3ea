// ModelSpec: a model file's layer entries, and the rewrites that turn them into the entries a
// LayerChain builds.
//
// Model file:  {"name": "simplecnn", "input_shape": [28, 28, 1],            (optional, HWC)
//               "classes": 10,                    (optional: what "$classes" in the layers is)
//               "layers": [{"type": "conv2d", "filters": 4, "kernel": 3}, {"type": "relu"}, ...]}
// Without input_shape the model takes the dataset's samples; without classes, its classes.
// A pinned variant names another model as its base instead of listing layers, and pins its shape
// and classes: {"name": "resnet20_cifar10", "base": "resnet20", "input_shape": [32, 32, 3],
// "classes": 10} (PyDTNN 1.x's sized names over 3.x's dataset-generic models).
// A layer entry may be {"repeat": N, "layers": [...]}, expanded in place N times.
// A layer plugin may be an alias of another with some parameters fixed (pointwise_conv2d: a conv2d
// with kernel 1, ...): resolve_aliases rewrites such entries before the model builds them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/device.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_traits.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Registry;

struct LayerSpec {
  std::string type;
  Params params;  // the entry without "type"
};

struct ModelSpec {
  std::string name;
  std::filesystem::path file;           // empty when given inline
  std::optional<Shape> input_shape;     // HWC as written in the file
  std::optional<std::int64_t> classes;  // "$classes" when the file pins it
  std::vector<LayerSpec> layers;
};

// A list of layer entries (repeat blocks expanded); where names it in errors.
DTNN_CORE_EXPORT std::vector<LayerSpec> parse_layer_list(const nlohmann::json& layers,
                                                         const std::string& where);
// The fusion rules (plugin_traits.hpp) of the layer plugin `type` on device (none for a type
// without a plugin there). An absorbed layer becomes the fusing one's parameter: its type name
// where the plugin's default for that parameter is a string ("activation": "relu"), else its
// parameters ("batchnorm": {...}).
DTNN_CORE_EXPORT std::vector<FusionRule> fusion_rules(const Registry& registry,
                                                      const std::string& type, Device device);
// Rewrites the entries whose layer plugin is an alias (traits {"alias": {"type": "conv2d",
// "fixed": {"kernel": 1, ...}}}) into the aliased type with the fixed parameters; an entry that
// sets a fixed parameter is an Error naming it.
DTNN_CORE_EXPORT void resolve_aliases(std::vector<LayerSpec>& specs, const Registry& registry);
// Every fusion option the layer plugins on device declare.
DTNN_CORE_EXPORT std::set<std::string> fusion_options(const Registry& registry, Device device);
// Rewrites runs of layers into fused ones, left to right, the rules of each layer in the order its
// plugin lists them (the longest run first), as far as `fusions` enables them. A layer that already
// sets a parameter its rules write is neither fused nor absorbed.
DTNN_CORE_EXPORT void fuse_layers(std::vector<LayerSpec>& specs, const Fusions& fusions,
                                  const Registry& registry, Device device);
// Replaces, in every layer entry (blocks' paths included), a parameter value that is one of the
// names in `sizes` ("$classes", "$vocab", "$source_length") by its number, so that a model file
// takes its classifier's width, its embedding's vocabulary or its encoder's length from the
// dataset. A name the run does not know
// (a dataset without a vocabulary) is an Error naming the entry.
DTNN_CORE_EXPORT void substitute_sizes(std::vector<LayerSpec>& specs,
                                       const std::map<std::string, std::int64_t>& sizes);
// The most layers a model may expand to, repeat blocks and blocks' paths included.
inline constexpr std::int64_t kMaxModelLayers = 100000;
// A model object; a "base" in it is looked for as a model name is, beside `relative_to` (the
// experiment file holding the object) first.
DTNN_CORE_EXPORT ModelSpec parse_model_spec(const nlohmann::json& j, const std::string& where,
                                            const std::filesystem::path& relative_to = {});
DTNN_CORE_EXPORT ModelSpec load_model_spec(const std::filesystem::path& file);

}  // namespace dtnn
