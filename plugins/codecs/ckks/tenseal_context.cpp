#include "tenseal_context.hpp"

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>

#include "dtnn/error.hpp"

namespace dtnn_ckks {

namespace py = pybind11;
using dtnn::Error;

namespace {

// The Python side: small functions over TenSEAL, so the C++ side passes bytes and numbers only.
constexpr const char* kHelpers = R"PY(
import array
import hashlib
import tenseal as ts
import tenseal.sealapi  # registers SEAL's types, which describe() reads

def make(degree, bits, scale_bits):
    context = ts.context(ts.SCHEME_TYPE.CKKS, poly_modulus_degree=degree,
                         coeff_mod_bit_sizes=bits, n_threads=1)
    context.global_scale = 2.0 ** scale_bits
    return context

def load(data):
    return ts.context_from(bytes(data), n_threads=1)

def describe(context):
    data = context.seal_context().data
    key = data.key_context_data().parms()
    first = data.first_context_data().parms()
    return (str(key.scheme()).rsplit('.', 1)[-1], key.poly_modulus_degree(),
            [q.bit_count() for q in key.coeff_modulus()],
            [q.bit_count() for q in first.coeff_modulus()],
            context.global_scale, context.is_private())

def secret(context):
    return context.serialize(save_public_key=True, save_secret_key=True,
                             save_galois_keys=False, save_relin_keys=False)

def fingerprint(context):
    public = context.serialize(save_public_key=True, save_secret_key=False,
                               save_galois_keys=False, save_relin_keys=False)
    return hashlib.sha256(public).digest()

def encrypt(context, data):
    values = array.array('f')
    values.frombytes(data)
    return ts.ckks_vector(context, values.tolist()).serialize()

def add(context, a, b):
    return (ts.ckks_vector_from(context, bytes(a)) + ts.ckks_vector_from(context, bytes(b))).serialize()

def decrypt(context, data):
    return array.array('d', ts.ckks_vector_from(context, bytes(data)).decrypt()).tobytes()
)PY";

// The helpers' namespace, made on Python's thread the first time it is needed.
py::dict& helpers() {
  static py::dict* scope = nullptr;
  if (scope) return *scope;
  auto* made = new py::dict();  // never freed: the interpreter outlives every plugin
  try {
    (*made)["__builtins__"] = py::module_::import("builtins");
    py::exec(kHelpers, *made);
  } catch (const py::error_already_set& e) {
    delete made;
    throw Error("ckks: cannot use Python's tenseal (" + dtnn_python::describe(e) +
                "); install it: python3 -m pip install --break-system-packages --no-deps "
                "tenseal==0.3.18 (scripts/install-deps.sh does)");
  }
  scope = made;
  return *scope;
}

py::object call(const char* function, const std::string& doing, auto&&... args) {
  try {
    return helpers()[function](std::forward<decltype(args)>(args)...);
  } catch (const py::error_already_set& e) {
    throw Error("ckks: " + doing + ": " + dtnn_python::describe(e));
  }
}

py::bytes as_bytes(std::span<const unsigned char> data) {
  return py::bytes(reinterpret_cast<const char*>(data.data()), data.size());
}

std::vector<unsigned char> to_vector(const py::object& bytes) {
  const std::string_view view = bytes.cast<py::bytes>();
  return std::vector<unsigned char>(view.begin(), view.end());
}

}  // namespace

std::size_t Geometry::ciphertext_bound() const {
  const std::size_t raw = 2 * static_cast<std::size_t>(degree) * data_primes * 8;
  return raw + raw / 64 + 4096;
}

TensealContext::TensealContext(dtnn_python::Ref context) : context_(std::move(context)) {
  std::string scheme;
  bool secret = false;
  double scale = 0;
  dtnn_python::run([&] {
    const py::tuple d = call("describe", "reading the key's parameters", context_.get());
    scheme = d[0].cast<std::string>();
    secret = d[5].cast<bool>();
    geometry_.degree = d[1].cast<int>();
    for (const auto bits : d[2].cast<std::vector<int>>()) geometry_.modulus_bits += bits;
    const auto first = d[3].cast<std::vector<int>>();
    geometry_.data_primes = static_cast<int>(first.size());
    for (const auto bits : first) geometry_.data_bits += bits;
    scale = d[4].cast<double>();
  });
  if (scheme != "CKKS") throw Error("ckks: the key is for " + scheme + ", not CKKS");
  if (!secret) throw Error("ckks: the key has no secret key (a public context)");
  int exponent = 0;
  if (!(scale > 0) || std::frexp(scale, &exponent) != 0.5)
    throw Error("ckks: the key's scale " + std::to_string(scale) + " is not a power of two");
  geometry_.scale_bits = exponent - 1;
}

TensealContext TensealContext::make(int log_slots, int scale_bits) {
  dtnn_python::Ref made;
  dtnn_python::run([&] {
    const int prime = scale_bits + 20;
    py::list bits;
    bits.append(prime);
    bits.append(prime);
    made = dtnn_python::Ref(call("make", "making a key", 2 << log_slots, bits, scale_bits));
  });
  return TensealContext(std::move(made));
}

TensealContext TensealContext::load(std::span<const unsigned char> serialized,
                                    const std::string& what) {
  try {
    dtnn_python::Ref loaded;
    dtnn_python::run(
        [&] { loaded = dtnn_python::Ref(call("load", "reading " + what, as_bytes(serialized))); });
    return TensealContext(std::move(loaded));
  } catch (const Error& e) {
    const std::string m = e.what();
    throw Error(what + ": not a TenSEAL CKKS key with its secret key (" +
                (m.rfind("ckks: ", 0) == 0 ? m.substr(6) : m) + ")");
  }
}

std::vector<unsigned char> TensealContext::serialize_with_secret_key() const {
  std::vector<unsigned char> out;
  dtnn_python::run([&] { out = to_vector(call("secret", "serialising the key", context_.get())); });
  return out;
}

std::vector<unsigned char> TensealContext::fingerprint() const {
  std::vector<unsigned char> out;
  dtnn_python::run(
      [&] { out = to_vector(call("fingerprint", "fingerprinting the key", context_.get())); });
  return out;
}

std::vector<unsigned char> TensealContext::encrypt(std::span<const float> values) const {
  DTNN_CHECK(values.size() <= geometry_.slots(), "ckks: more values than a ciphertext has slots");
  std::vector<unsigned char> out;
  dtnn_python::run([&] {
    const py::bytes data(reinterpret_cast<const char*>(values.data()), values.size_bytes());
    out = to_vector(call("encrypt", "encrypting", context_.get(), data));
  });
  return out;
}

std::vector<unsigned char> TensealContext::add(std::span<const unsigned char> a,
                                               std::span<const unsigned char> b) const {
  std::vector<unsigned char> out;
  dtnn_python::run([&] {
    out = to_vector(call("add", "adding two ciphertexts (is each a ciphertext of this run's key?)",
                         context_.get(), as_bytes(a), as_bytes(b)));
  });
  return out;
}

void TensealContext::decrypt_add(std::span<const unsigned char> ciphertext, std::span<float> out,
                                 float scale) const {
  std::vector<double> values;
  dtnn_python::run([&] {
    const py::object got = call("decrypt", "decrypting (a ciphertext of this run's key?)",
                                context_.get(), as_bytes(ciphertext));
    const std::string_view view = got.cast<py::bytes>();
    values.resize(view.size() / sizeof(double));
    std::memcpy(values.data(), view.data(), values.size() * sizeof(double));
  });
  if (values.size() < out.size())
    throw Error("ckks: a ciphertext holds " + std::to_string(values.size()) + " values, not " +
                std::to_string(out.size()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += scale * static_cast<float>(values[i]);
}

}  // namespace dtnn_ckks
