// A CKKS key and its parameters, through TenSEAL (PyPI's tenseal: Microsoft SEAL with Python
// bindings, the library PyDTNN 3.x's --encryption tenseal uses), reached through the embedded
// interpreter (embedded_python.hpp). One ciphertext carries up to slots() values; ciphertexts of
// one key add without being decrypted. Every call runs on Python's thread, so ranks that are
// threads of one process take turns.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "embedded_python.hpp"

namespace dtnn_ckks {

struct Geometry {
  int degree = 0;        // the ring's degree N: N / 2 slots per ciphertext
  int data_primes = 0;   // the moduli a fresh ciphertext has (its level)
  int modulus_bits = 0;  // all moduli's bits, the special prime's included
  int scale_bits = 0;    // values go as value x 2^scale_bits
  int data_bits = 0;     // a fresh ciphertext's modulus bits: what a value x 2^scale must fit in
  std::size_t slots() const { return static_cast<std::size_t>(degree) / 2; }
  // The most bytes one serialised ciphertext takes: its two polynomials, one 64-bit word per
  // coefficient and prime, and room for SEAL's header and compression's worst case.
  std::size_t ciphertext_bound() const;
};

class TensealContext {
 public:
  // A fresh secret key: degree 2 x 2^log_slots, a data prime of scale_bits + 20 bits and a special
  // prime as large.
  static TensealContext make(int log_slots, int scale_bits);
  // A key TenSEAL serialised (with its secret key); an Error starting with `what` when it is not
  // one, not CKKS, or has no secret key.
  static TensealContext load(std::span<const unsigned char> serialized, const std::string& what);

  const Geometry& geometry() const { return geometry_; }
  std::vector<unsigned char> serialize_with_secret_key() const;
  // SHA-256 of the public key and parameters: equal on ranks that hold the same key.
  std::vector<unsigned char> fingerprint() const;

  // At most slots() values, encrypted: a serialised ciphertext, new randomness every time.
  std::vector<unsigned char> encrypt(std::span<const float> values) const;
  // The serialised ciphertext of a + b; an Error when either is not a ciphertext of this key.
  std::vector<unsigned char> add(std::span<const unsigned char> a,
                                 std::span<const unsigned char> b) const;
  // out += scale x the decryption of `ciphertext` (its first out.size() values).
  void decrypt_add(std::span<const unsigned char> ciphertext, std::span<float> out,
                   float scale) const;

 private:
  explicit TensealContext(dtnn_python::Ref context);
  dtnn_python::Ref context_;
  Geometry geometry_;
};

}  // namespace dtnn_ckks
