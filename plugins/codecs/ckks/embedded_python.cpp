#include "embedded_python.hpp"

#include <dlfcn.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <thread>

#include "dtnn/error.hpp"

namespace dtnn_python {

namespace {

class PythonThread {
 public:
  PythonThread() {
    std::promise<void> started;
    auto ready = started.get_future();
    thread_ = std::thread([this, &started] {
      try {
        start();
      } catch (...) {
        started.set_exception(std::current_exception());
        return;
      }
      started.set_value();
      serve();
    });
    id_ = thread_.get_id();
    try {
      ready.get();
    } catch (...) {
      thread_.join();
      throw;
    }
    thread_.detach();  // it waits for work until the process ends
  }

  void run(const std::function<void()>& f) {
    if (std::this_thread::get_id() == id_) return f();
    Job job{&f, nullptr, false};
    std::unique_lock lock(mutex_);
    jobs_.push_back(&job);
    wake_.notify_all();
    done_.wait(lock, [&] { return job.done; });
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  struct Job {
    const std::function<void()>* f;
    std::exception_ptr error;
    bool done = false;
  };

  void start() {
    // This plugin was loaded with its own symbols kept local, and libpython with it; extension
    // modules (TenSEAL's, numpy's) expect Python's symbols global. Make them so, and keep
    // libpython loaded after the plugin is unloaded, since the interpreter outlives it.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&Py_IsInitialized), &info) != 0 && info.dli_fname)
      dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD | RTLD_NODELETE);
    if (Py_IsInitialized()) {  // dtnn runs inside Python: its interpreter serves
      PyGILState_Ensure();     // this thread's state, kept for good
    } else {
      // Named after the interpreter this library belongs to, which finds its own prefix and
      // packages from it: left unnamed, it would take the first python3 on PATH for its home (a
      // pyenv or a virtual environment's, whose packages are another Python's). PYTHONPATH
      // still adds folders.
      PyConfig config;
      PyConfig_InitPythonConfig(&config);
      config.install_signal_handlers = 0;
      PyStatus status =
          PyConfig_SetBytesString(&config, &config.program_name, DTNN_EMBEDDED_PYTHON);
      if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
      PyConfig_Clear(&config);
      if (PyStatus_Exception(status))
        throw dtnn::Error(std::string("starting Python (") + DTNN_EMBEDDED_PYTHON +
                          ") failed: " + (status.err_msg ? status.err_msg : "no reason given"));
    }
    saved_ = PyEval_SaveThread();  // the lock is taken only while a job runs
  }

  void serve() {
    for (;;) {
      Job* job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return !jobs_.empty(); });
        job = jobs_.front();
        jobs_.pop_front();
      }
      PyEval_RestoreThread(saved_);
      try {
        (*job->f)();
      } catch (const pybind11::error_already_set& e) {
        job->error = std::make_exception_ptr(dtnn::Error("Python: " + describe(e)));
      } catch (...) {
        job->error = std::current_exception();
      }
      saved_ = PyEval_SaveThread();
      std::lock_guard lock(mutex_);
      job->done = true;
      done_.notify_all();
    }
  }

  std::thread thread_;
  std::thread::id id_;
  PyThreadState* saved_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Job*> jobs_;
};

}  // namespace

void run(const std::function<void()>& f) {
  // Made once, never destroyed (its thread serves until the process ends); a failed start is
  // tried again by the next call.
  static std::mutex starting;
  static PythonThread* python = nullptr;
  {
    std::lock_guard lock(starting);
    if (!python) python = new PythonThread();
  }
  python->run(f);
}

Ref& Ref::operator=(Ref&& other) noexcept {
  if (this != &other) {
    release();
    o_ = std::move(other.o_);
  }
  return *this;
}

Ref::~Ref() { release(); }

void Ref::release() {
  if (!o_) return;
  try {
    run([this] { o_ = pybind11::object(); });
  } catch (...) {  // Python never started: nothing to release
  }
}

std::string describe(const pybind11::error_already_set& e) {
  std::string what = e.what();
  const auto line = what.find('\n');
  return line == std::string::npos ? what : what.substr(0, line);
}

}  // namespace dtnn_python
