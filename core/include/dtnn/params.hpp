// Params: a plugin's JSON parameters, read through typed getters whose errors name the
// source file and key ("configs/models/simplecnn.json: layers[0].kernel: expected an integer,
// got \"3x3\""). Keeps <nlohmann/json.hpp> out of plugin translation units.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Params {
 public:
  Params();
  // where: the location of this object for error messages, e.g. "exp.json: optimizer".
  Params(const nlohmann::json& object, std::string where);
  ~Params();
  Params(const Params&);
  Params& operator=(const Params&);

  bool has(std::string_view key) const;
  bool is_null(std::string_view key) const;  // present and null (a default left to the plugin)
  std::int64_t get_int(std::string_view key) const;
  double get_double(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  // Accepts a number or a list of numbers: kernel: 3 or kernel: [3, 5].
  std::vector<std::int64_t> get_ints(std::string_view key) const;
  // A (height, width) pair from one or two integers, each at least min and at most 2^20 (a
  // window in pixels): kernel: 3 or [3, 5].
  std::pair<std::int64_t, std::int64_t> get_pair(std::string_view key, std::int64_t min) const;
  std::vector<std::string> get_strings(std::string_view key) const;
  Params get_object(std::string_view key) const;

  [[noreturn]] void fail(std::string_view key, const std::string& expected) const;
  const std::string& where() const { return where_; }
  std::string key_path(std::string_view key) const;  // "exp.json: optimizer.beta1"
  const nlohmann::json& json() const;                // for core code that includes json.hpp
  std::string dump() const;

 private:
  std::shared_ptr<const nlohmann::json> json_;
  std::string where_;
};

}  // namespace dtnn
