// Number formatting shared by the core's reports (internal header).
#pragma once
#include <cstdint>
#include <string>

namespace dtnn::detail {

// 149210 -> "149,210"
inline std::string group_thousands(std::int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace dtnn::detail
