// Number formatting shared by the core's reports (internal header).
#pragma once
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

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

// rows as a boxed text table, the first row a header; the columns in `right` right-aligned.
inline std::string format_table(const std::vector<std::vector<std::string>>& rows,
                                const std::set<std::size_t>& right) {
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string rule = "+";
  for (auto w : width) rule += std::string(w + 2, '-') + "+";
  std::string out = rule + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += "|";
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      const std::string& cell = rows[i][c];
      const std::string pad(width[c] - cell.size(), ' ');
      out += " " + (right.count(c) ? pad + cell : cell + pad) + " |";
    }
    out += "\n";
    if (i == 0) out += rule + "\n";
  }
  return out + rule + "\n";
}

}  // namespace dtnn::detail
