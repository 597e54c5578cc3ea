#include "dtnn/log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

namespace dtnn {

namespace {
int g_rank = 0, g_size = 1;
LogLevel g_level = LogLevel::info;
std::mutex g_mutex;
}  // namespace

void set_log_rank(int rank, int size) {
  g_rank = rank;
  g_size = size;
}
std::string log_rank_prefix() {
  return g_size > 1 ? "rank " + std::to_string(g_rank) + ": " : std::string();
}
void set_log_level(LogLevel level) { g_level = level; }

void log_warning(const std::string& message) {
  if (g_rank != 0 || g_level < LogLevel::warning) return;
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "warning: %s\n", message.c_str());
}

void log_info(const std::string& message) {
  if (g_rank != 0 || g_level < LogLevel::info) return;
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "%s\n", message.c_str());
}

void log_info_once(const std::string& message) {
  static std::set<std::string> seen;
  {
    std::lock_guard lock(g_mutex);
    if (!seen.insert(message).second) return;
  }
  log_info(message);
}

}  // namespace dtnn
