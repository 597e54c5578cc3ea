#include "dtnn/config.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/executable_dir.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/log.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A parser callback that refuses nesting deeper than kMaxJsonDepth while parsing, before any of
// nlohmann's recursive copies, comparisons or dumps meets the document, and warns of a key given
// twice in one object (JSON takes the last silently: a config that sets "epochs" twice runs with
// the second, whichever the user meant).
json::parser_callback_t parse_guard(const std::string& where) {
  auto open_objects = std::make_shared<std::vector<std::set<std::string>>>();
  return [where, open_objects](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth)
      throw Error(where + ": arrays and objects nested more than " + std::to_string(kMaxJsonDepth) +
                  " deep (a model's blocks nest far less)");
    if (event == json::parse_event_t::object_start) {
      open_objects->emplace_back();
    } else if (event == json::parse_event_t::object_end && !open_objects->empty()) {
      open_objects->pop_back();
    } else if (event == json::parse_event_t::key && !open_objects->empty() && parsed.is_string()) {
      if (!open_objects->back().insert(parsed.get<std::string>()).second)
        log_warning(where + ": the key \"" + parsed.get<std::string>() +
                    "\" is given twice in one object: the last value is taken");
    }
    return true;
  };
}

}  // namespace

json parse_json(const std::string& text, const std::string& where) {
  try {
    return json::parse(text, parse_guard(where), true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    // parse_error knows the byte; out_of_range (a number such as 1e400) does not.
    const auto* parse = dynamic_cast<const json::parse_error*>(&e);
    if (!parse) throw Error(where + ": invalid JSON: " + msg);
    const std::size_t offset =
        std::min<std::size_t>(parse->byte ? parse->byte - 1 : 0, text.size());
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    const std::size_t last_nl = text.rfind('\n', offset ? offset - 1 : 0);
    const std::size_t column =
        last_nl == std::string::npos || offset == 0 ? offset + 1 : offset - last_nl;
    throw Error(where + ":" + std::to_string(line) + ":" + std::to_string(column) +
                ": invalid JSON (byte " + std::to_string(offset) + "): " + msg);
  }
}

json parse_json_or_discarded(const std::string& text, const std::string& where) {
  return json::parse(text, parse_guard(where), /*allow_exceptions=*/false);
}

json read_json_file(const fs::path& file) { return parse_json(read_file(file), file.string()); }

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    std::vector<std::size_t> row(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (word[i - 1] == c[j - 1] ? 0u : 1u)});
        diag = up;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : "";
}

namespace {
// PyDTNN's names of zoo models that configs/models holds under another name.
constexpr std::pair<std::string_view, std::string_view> kModelAliases[] = {
    {"resnet50v15_imagenet", "resnet50_imagenet"},  // dtnn's ResNet-50 is v1.5
    {"mobilenetv2_pytorch", "mobilenetv2"},         // PyDTNN 3.x's name of MobileNetV2
};
}  // namespace

std::string_view model_alias(std::string_view name) {
  for (const auto& [alias, model] : kModelAliases)
    if (alias == name) return model;
  return name;
}

// A bare name ("simplemlp": no folder, no .json) is the zoo's model: configs/models beside the
// experiment, then the source tree's, the program's and the core library's (share/dtnn beside
// their folders), and the configured install's. A file of that name in the experiment's
// or the working folder is taken only when the zoo has no such model; when both exist the zoo's
// wins and a note says how to take the file ("./simplemlp"). Anything else is a path, relative to
// the experiment's folder, then the working folder.
fs::path resolve_model_path(const std::string& name, const fs::path& config_file,
                            std::string_view key) {
  const std::string model(model_alias(name));
  const fs::path given(model);
  const fs::path config_dir = config_file.empty() ? fs::path(".") : config_file.parent_path();
  std::vector<fs::path> zoo, files;
  if (given.is_absolute()) {
    files.push_back(given);
  } else {
    files.push_back(config_dir / given);
    files.push_back(fs::current_path() / given);
    if (given.extension() != ".json" && !given.has_parent_path()) {
      const std::string file = model + ".json";
      zoo.push_back(config_dir / "models" / file);
      zoo.push_back(fs::path(DTNN_SOURCE_DIR) / "configs" / "models" / file);
      if (const fs::path exe = executable_dir(); !exe.empty())  // a moved install or bundle
        zoo.push_back(exe.parent_path() / "share" / "dtnn" / "configs" / "models" / file);
      if (const fs::path lib = core_library_dir(); !lib.empty())  // the Python module's install
        zoo.push_back(lib.parent_path() / "share" / "dtnn" / "configs" / "models" / file);
      zoo.push_back(fs::path(DTNN_INSTALL_PREFIX) / "share" / "dtnn" / "configs" / "models" / file);
    }
  }
  auto first_file = [](const std::vector<fs::path>& candidates) -> std::optional<fs::path> {
    for (const auto& c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) return c.lexically_normal();
    }
    return std::nullopt;
  };
  const std::optional<fs::path> from_zoo = first_file(zoo), from_files = first_file(files);
  if (from_zoo) {
    if (from_files)
      log_warning(std::string(key) + ": '" + name + "' is the zoo's model " + from_zoo->string() +
                  ", not the file " + from_files->string() + " (write ./" + name +
                  " to take the file)");
    return *from_zoo;
  }
  if (from_files) return *from_files;
  std::string looked;
  for (const auto* list : {&zoo, &files})
    for (const auto& c : *list)
      looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
  throw Error((config_file.empty() ? std::string("config") : config_file.string()) + ": " +
              std::string(key) + ": cannot find '" + name + "' (looked for " + looked + ")");
}

}  // namespace dtnn
