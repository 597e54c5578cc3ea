#include "dtnn/runtime.hpp"

#include <blis.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>

#include "dtnn/gemm.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/log.hpp"

namespace dtnn {

namespace {

RuntimeInfo g_info;
// When the core library was loaded: process_age_seconds()'s fallback.
const auto g_loaded = std::chrono::steady_clock::now();

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

// BLIS fixes its kernel choice once per process, so ask it in a child that exits right away.
// With try_arch >= 0 the child first sets BLIS_ARCH_TYPE=try_arch and must also compute a small
// GEMM correctly (some BLIS builds abort on an override). Returns the kernel set id the child
// ended up with, or -1 when it could not tell (fork failed, or the child died).
int blis_choice_in_child(int try_arch) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    int id = -1;
    if (try_arch >= 0) {
      setenv("BLIS_ARCH_TYPE", std::to_string(try_arch).c_str(), 1);
      float a[4] = {1, 2, 3, 4}, c[4] = {0, 0, 0, 0}, one = 1, zero = 0;
      bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, 2, 2, 2, &one, a, 2, 1, a, 2, 1, &zero, c, 2,
                1);
      if (c[0] == 7 && c[1] == 10 && c[2] == 15 && c[3] == 22)
        id = static_cast<int>(bli_arch_query_id());
    } else {
      id = static_cast<int>(bli_arch_query_id());
    }
    ssize_t written = write(fds[1], &id, sizeof id);
    _exit(written == sizeof id ? 0 : 1);
  }
  close(fds[1]);
  int id = -1;
  ssize_t got = read(fds[0], &id, sizeof id);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == sizeof id && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? id : -1;
}

// BLIS's id of a kernel set by name (bli_arch_string's names), or -1.
int blis_arch_id(const std::string& set) {
  for (int id = 0; id < static_cast<int>(BLIS_NUM_ARCHS); ++id)
    if (set == bli_arch_string(static_cast<arch_t>(id))) return id;
  return -1;
}

bool cpu_is_amd() {
  __builtin_cpu_init();
  return __builtin_cpu_is("amd");
}

void select_blis_kernels() {
  if (const char* user = std::getenv("BLIS_ARCH_TYPE")) {
    g_info.blis_selection = std::string("BLIS_ARCH_TYPE=") + user + " set by the user";
    return;
  }
  const int own = blis_choice_in_child(-1);
  if (own < 0) {
    g_info.blis_selection = "BLIS's own detection (could not pre-check it)";
    return;
  }
  const std::string own_name = bli_arch_string(static_cast<arch_t>(own));
  g_info.blis_detected = own_name;
  const BlisRequest request = blis_kernels_to_request(own_name, isa::ceiling(), cpu_is_amd());
  if (request.set.empty()) {
    g_info.blis_selection = "BLIS's own detection; " + request.reason;
    return;
  }
  const int wanted = blis_arch_id(request.set);
  if (wanted < 0 || blis_choice_in_child(wanted) != wanted) {
    g_info.blis_selection = "BLIS's own detection ('" + own_name +
                            "'); this BLIS build could not run '" + request.set +
                            "', which dtnn wanted: " + request.reason;
    return;
  }
  setenv("BLIS_ARCH_TYPE", std::to_string(wanted).c_str(), 1);  // read by BLIS at its first call
  g_info.blis_selection =
      "BLIS detected '" + own_name + "'; dtnn selected '" + request.set + "': " + request.reason;
}

}  // namespace

std::string blis_kernels_at(isa::Level level) {
  if (g_info.blis_detected.empty()) return "";
  const std::string wanted = blis_kernels_to_request(g_info.blis_detected, level, cpu_is_amd()).set;
  return wanted.empty() ? g_info.blis_detected : wanted;
}

void set_num_threads(int threads) {
  if (threads <= 0)
    threads = std::getenv("OMP_NUM_THREADS") ? omp_get_max_threads() : omp_get_num_procs();
  omp_set_num_threads(threads);
  bli_thread_set_num_threads(threads);
  g_info.threads = threads;
}

void initialize_runtime(int threads) {
  isa::check_build_runs();
  isa::ceiling();     // a bad DTNN_ISA is an error here, at start-up
  blis_sup_policy();  // and a bad DTNN_BLIS_SUP
  static std::once_flag once;
  std::call_once(once, [] {
    select_blis_kernels();
    // BLIS's kernel contexts first: asked for its arch id before it initialised itself, BLIS 0.9
    // aborts when BLIS_ARCH_TYPE is set ("Accessed uninitialized context in gks"), as it is
    // by the user or by select_blis_kernels on a CPU it does not know (AMD Zen 5).
    bli_init();
    g_info.cpu = cpu_model_name();
    g_info.blis_version = bli_info_get_version_str();
    g_info.blis_kernels = bli_arch_string(bli_arch_query_id());
    if (g_info.blis_kernels == "generic")
      log_warning("BLIS runs its slow 'generic' kernels (" + g_info.blis_selection + ")");
  });
  set_num_threads(threads);
}

const RuntimeInfo& runtime_info() {
  initialize_runtime(g_info.threads);
  return g_info;
}

double process_age_seconds() {
  // /proc/self/stat's 22nd field, counted after the command name's closing parenthesis (the name
  // may hold spaces), is the start time in clock ticks since boot; /proc/uptime's first, now.
  std::ifstream stat("/proc/self/stat"), uptime("/proc/uptime");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  double now = 0;
  const std::size_t close = text.rfind(')');
  const long ticks = sysconf(_SC_CLK_TCK);
  if (close != std::string::npos && (uptime >> now) && ticks > 0) {
    std::istringstream fields(text.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i)
      if (i == 22) return now - std::stod(field) / static_cast<double>(ticks);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_loaded).count();
}

}  // namespace dtnn
