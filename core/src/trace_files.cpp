// write_trace: the format by the file's extension.
#include "dtnn/trace_files.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <limits>

#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"

namespace dtnn::trace {

std::int64_t first_begin_ns(const std::vector<RankTrace>& ranks) {
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const RankTrace& r : ranks)
    for (const Event& e : r.recorded.events)
      origin = std::min(origin, e.begin_ns - r.clock_offset_ns);
  return origin == std::numeric_limits<std::int64_t>::max() ? 0 : origin;
}

void check_trace_name(const std::string& file) {
  const std::string ext = std::filesystem::path(file).extension().string();
  if (ext != ".json" && ext != ".csv" && ext != ".prv")
    throw Error("output.trace: '" + file +
                "': expected a name ending in .json (Chrome trace events, for Perfetto), .csv "
                "(PyDTNN's simple tracer) or .prv (Paraver, with its .pcf and .row)");
}

std::vector<std::string> trace_files(const std::string& file) {
  check_trace_name(file);
  const std::filesystem::path path(file);
  if (path.extension() != ".prv") return {file};
  std::filesystem::path pcf = path, row = path;
  pcf.replace_extension(".pcf");
  row.replace_extension(".row");
  return {file, pcf.string(), row.string()};
}

std::vector<std::string> write_trace(const std::string& file, const std::vector<RankTrace>& ranks) {
  const std::vector<std::string> files = trace_files(file);
  const std::string ext = std::filesystem::path(file).extension().string();
  std::vector<std::string> texts;
  if (ext == ".json") {
    texts = {chrome_json(ranks)};
  } else if (ext == ".csv") {
    texts = {ranks.empty() ? simple_csv(RankTrace{}) : simple_csv(ranks.front())};
  } else {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(date, sizeof date, "%d/%m/%y at %H:%M", &tm);
    ParaverFiles f = paraver(ranks, date);
    texts = {std::move(f.prv), std::move(f.pcf), std::move(f.row)};
  }
  std::string failed;
  for (std::size_t i = 0; i < files.size(); ++i) {
    try {
      write_file_atomically(files[i], texts[i]);
    } catch (const Error& e) {
      failed += (failed.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  if (!failed.empty()) throw Error(failed);
  return files;
}

}  // namespace dtnn::trace
