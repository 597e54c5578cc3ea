// The Python interpreter inside a dtnn process, for plugins that reach a library only Python has
// (ckks: TenSEAL). Every call into Python runs on one thread of its own, which starts the
// interpreter (unless the process already runs one: dtnn imported from Python) and holds Python's
// lock only while it runs a call. One thread, because Python's thread states and those of the
// extension modules' own bindings (pybind11's, TenSEAL's) must agree on which thread holds the
// lock; ranks that are threads of one process take turns, as Python's lock would make them anyway.
// The interpreter is never finalised: extension modules may keep threads until the process ends.
#pragma once
#include <pybind11/pybind11.h>

#include <functional>
#include <string>

namespace dtnn_python {

// Runs f on Python's thread, holding Python's lock, and waits for it; an exception f throws is
// rethrown here (a Python exception inside f should be turned into a C++ one by f: run turns one
// that escapes into a dtnn::Error). The first call starts the thread; an Error says why the
// interpreter could not start. Called from within f, f runs at once.
void run(const std::function<void()>& f);

// A Python object that outlives the call that made it: released on Python's thread.
class Ref {
 public:
  Ref() = default;
  explicit Ref(pybind11::object o) : o_(std::move(o)) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& other) noexcept = default;
  Ref& operator=(Ref&& other) noexcept;
  ~Ref();
  // Only inside run().
  const pybind11::object& get() const { return o_; }

 private:
  void release();
  pybind11::object o_;
};

// What a Python exception says, one line: "ValueError: ...". Only inside run().
std::string describe(const pybind11::error_already_set& e);

}  // namespace dtnn_python
