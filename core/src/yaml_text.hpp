// A JSON value as YAML block text (internal header): mappings and sequences in block style, strings
// double-quoted (JSON's escapes are YAML's too), numbers that YAML 1.1 readers (PyYAML) also take
// as numbers (a float always has a '.' before its exponent; .nan, .inf), null, true, false.
#pragma once
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace dtnn::detail {

template <class Json>  // nlohmann::json, or ordered_json to keep the keys' order
std::string yaml_scalar(const Json& v) {
  if (v.is_number_float()) {
    const double d = v.template get<double>();
    if (std::isnan(d)) return ".nan";
    if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", d);
    std::string s = text;
    if (s.find('.') == std::string::npos) {  // 1e-05 -> 1.0e-05, 3 -> 3.0
      const std::size_t e = s.find('e');
      s.insert(e == std::string::npos ? s.size() : e, ".0");
    }
    return s;
  }
  if (v.is_object()) return "{}";  // empty ones only: yaml_block writes the others
  if (v.is_array()) return "[]";
  return v.dump();  // null, booleans, integers, strings (double-quoted)
}

inline std::string yaml_key(const std::string& key) {
  const bool plain =
      !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') &&
      key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
          std::string::npos;
  return plain ? key : nlohmann::json(key).dump();
}

// v at `indent` spaces; a mapping's or sequence's entries one a line, in v's order.
template <class Json>
std::string yaml_block(const Json& v, int indent = 0) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  auto nested = [](const Json& x) { return (x.is_object() || x.is_array()) && !x.empty(); };
  std::string out;
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      out += pad + yaml_key(it.key()) + ":" +
             (nested(it.value()) ? "\n" + yaml_block(it.value(), indent + 2)
                                 : " " + yaml_scalar(it.value()) + "\n");
  } else if (v.is_array() && !v.empty()) {
    for (const auto& item : v) {
      if (!nested(item)) {
        out += pad + "- " + yaml_scalar(item) + "\n";
        continue;
      }
      // "- " then the item's block, its first line after the dash.
      const std::string block = yaml_block(item, indent + 2);
      out += pad + "- " + block.substr(static_cast<std::size_t>(indent + 2));
    }
  } else {
    out += pad + yaml_scalar(v) + "\n";
  }
  return out;
}

}  // namespace dtnn::detail
