#include "csv_table.hpp"

#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "dtnn/error.hpp"
#include "read_file.hpp"

namespace dtnn::datasets {

namespace {

enum class Cell { number, not_a_number, out_of_range, not_finite };

// One cell's value. from_chars refuses a number whose magnitude is below the smallest double
// (1e-400) as out of range; strtod reads it as what it rounds to (0 or a subnormal), as every
// other reader of CSV files does, so only a true overflow stays an error.
Cell parse_cell(std::string_view cell, double& v) {
  if (cell.empty()) return Cell::not_a_number;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (end != cell.data() + cell.size() || ec == std::errc::invalid_argument)
    return Cell::not_a_number;
  if (ec == std::errc::result_out_of_range) {
    const std::string copy(cell);
    errno = 0;
    v = std::strtod(copy.c_str(), nullptr);
    if (!(errno == ERANGE && std::abs(v) <= DBL_MIN)) return Cell::out_of_range;
  }
  return std::isfinite(v) ? Cell::number : Cell::not_finite;
}

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(' '), last = s.find_last_not_of(' ');
  return first == std::string_view::npos ? std::string_view() : s.substr(first, last - first + 1);
}

}  // namespace

CsvTable parse_csv_table(std::string_view text, const std::string& file) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
  CsvTable t;
  bool header_allowed = true;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<double> row;
    Cell problem = Cell::number;
    std::string_view bad;  // the first cell that is not a finite number
    std::size_t bad_column = 0;
    for (std::size_t from = 0;;) {
      const std::size_t comma = line.find(',', from);
      const std::string_view cell =
          trimmed(line.substr(from, comma == std::string_view::npos ? line.npos : comma - from));
      double v = 0;
      const Cell c = parse_cell(cell, v);
      if (c != Cell::number && problem == Cell::number) {
        problem = c;
        bad = cell;
        bad_column = row.size() + 1;
      }
      row.push_back(v);
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
    const std::string where = file + ": line " + std::to_string(line_number);
    if (problem != Cell::number) {
      if (header_allowed && problem == Cell::not_a_number) {  // a header
        header_allowed = false;
        continue;
      }
      const std::string shown = bad.empty() ? "(empty)" : std::string(bad.substr(0, 40));
      throw Error(where + ", column " + std::to_string(bad_column) + ": '" + shown + "' " +
                  (problem == Cell::not_a_number   ? "is not a number"
                   : problem == Cell::out_of_range ? "is out of a double's range"
                                                   : "is not finite: inputs and targets are "
                                                     "finite numbers"));
    }
    header_allowed = false;
    if (t.columns == 0) t.columns = static_cast<std::int64_t>(row.size());
    if (static_cast<std::int64_t>(row.size()) != t.columns)
      throw Error(where + ": " + std::to_string(row.size()) + " columns, the rows before have " +
                  std::to_string(t.columns));
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) throw Error(file + ": no rows of numbers");
  return t;
}

CsvTable read_csv_table(const std::string& file) {
  const std::vector<std::uint8_t> bytes = read_file(file);
  return parse_csv_table(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), file);
}

}  // namespace dtnn::datasets
