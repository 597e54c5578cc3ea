// The csv dataset's table reader (plugins/datasets/csv/csv_table.hpp). Any bytes give a table or a
// dtnn::Error; a table holds rows of one width, of finite numbers only.
#include <cmath>
#include <cstdlib>

#include "csv_table.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dtnn::fuzz::expect_clear_errors([&] {
    const dtnn::datasets::CsvTable t =
        dtnn::datasets::parse_csv_table(dtnn::fuzz::text(data, size), "fuzz.csv");
    if (t.rows.empty() || t.columns < 1) std::abort();
    for (const auto& row : t.rows) {
      if (static_cast<std::int64_t>(row.size()) != t.columns) std::abort();
      for (const double v : row)
        if (!std::isfinite(v)) std::abort();
    }
  });
  return 0;
}
