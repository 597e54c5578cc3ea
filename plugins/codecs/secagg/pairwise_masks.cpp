#include "pairwise_masks.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"

namespace dtnn_secagg {

using dtnn::Error;

namespace {

struct FreeCipher {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherPtr = std::unique_ptr<EVP_CIPHER_CTX, FreeCipher>;

[[noreturn]] void fail(const std::string& doing) {
  throw Error("secagg: " + doing + " failed (OpenSSL: " + dtnn_codecs::openssl_reason() + ")");
}

}  // namespace

PairwiseMasks::PairwiseMasks(dtnn::Communicator& comm)
    : rank_(comm.rank()),
      pair_keys_(dtnn_codecs::agree_pair_keys(comm, "secagg",
                                              "dtnn secure aggregation, pairwise mask key, v1")) {}

PairwiseMasks::PairwiseMasks(int rank, std::vector<Key> pair_keys)
    : rank_(rank), pair_keys_(std::move(pair_keys)) {}

void mask_stream(const Key& key, std::uint64_t round, std::span<std::uint64_t> out) {
  // OpenSSL's ChaCha20 IV: a 32-bit block counter (from 0), then the 96-bit nonce (round, 0).
  unsigned char iv[16] = {};
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<unsigned char>(round >> (8 * i));
  CipherPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_chacha20(), nullptr, key.data(), iv) != 1)
    fail("starting ChaCha20");
  std::fill(out.begin(), out.end(), 0);
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  const std::size_t total = out.size_bytes();
  for (std::size_t at = 0; at < total;) {  // the keystream is the encryption of zeros, in place
    const int chunk = static_cast<int>(std::min<std::size_t>(total - at, std::size_t{1} << 30));
    int written = 0;
    if (EVP_EncryptUpdate(ctx.get(), bytes + at, &written, bytes + at, chunk) != 1 ||
        written != chunk)
      fail("ChaCha20");
    at += static_cast<std::size_t>(chunk);
  }
}

void PairwiseMasks::add_to(std::span<unsigned char> words, std::uint64_t round) const {
  std::vector<int> others;
  for (int j = 0; j < size(); ++j)
    if (j != rank_) others.push_back(j);
  add_pairs_to(words, round, others);
}

void PairwiseMasks::add_pairs_to(std::span<unsigned char> words, std::uint64_t round,
                                 std::span<const int> others) const {
  DTNN_CHECK(words.size() % 8 == 0, "secagg: masks are added to whole words");
  const std::size_t n = words.size() / 8;
  for (const int j : others) {
    DTNN_CHECK(j >= 0 && j < size() && j != rank_, "secagg: a pair with an unknown rank");
    stream_.resize(n);
    mask_stream(pair_keys_[static_cast<std::size_t>(j)], round, stream_);
    const bool add = rank_ < j;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t w;
      std::memcpy(&w, words.data() + 8 * i, 8);
      w = add ? w + stream_[i] : w - stream_[i];  // modulo 2^64
      std::memcpy(words.data() + 8 * i, &w, 8);
    }
  }
}

}  // namespace dtnn_secagg
