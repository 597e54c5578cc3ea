#include "dtnn/stop_request.hpp"

#include <signal.h>

#include <atomic>

namespace dtnn {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "read and written by a signal handler");

extern "C" void on_stop_signal(int signal) {
  if (g_signal.exchange(signal) != 0) {  // the second one: the default action, now
    ::signal(signal, SIG_DFL);
    ::raise(signal);
  }
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a read or write in progress goes on
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

int stop_requested() { return g_signal.load(std::memory_order_relaxed); }

void clear_stop_request() { g_signal.store(0); }

}  // namespace dtnn
