// The rows of a CSV file of numbers (the csv dataset's reader; tests/fuzz/fuzz_csv.cpp feeds it).
// Fields are separated by commas, spaces around a field are dropped, a first line that is not all
// numbers is a header, a UTF-8 byte-order mark before it is skipped, empty lines are skipped. Every
// value must be finite (a number too small for a double reads as 0 or a subnormal, as strtod
// reads it). Errors name the file, the line and the column: a cell that is not a number, one
// out of range or not finite, a row of another width, a file with no rows.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtnn::datasets {

struct CsvTable {
  std::int64_t columns = 0;
  std::vector<std::vector<double>> rows;
};

// The table in `text` (a file's bytes); `file` names it in errors.
CsvTable parse_csv_table(std::string_view text, const std::string& file);
// The table in a file (gzip'd or not).
CsvTable read_csv_table(const std::string& file);

}  // namespace dtnn::datasets
