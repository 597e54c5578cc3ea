// A message only the holder of a pair's key can read and nobody can alter unnoticed: ChaCha20-
// Poly1305 under a key used for one message only (derived per purpose from a pair key), so its
// nonce can be fixed. ckks sends its CKKS secret key to each rank in one.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "pair_keys.hpp"

namespace dtnn_codecs {

// The sealed message: the ciphertext, then the 16-byte tag.
std::vector<unsigned char> seal(const Key& key, std::span<const unsigned char> message);
// The message; an Error beginning with `what` when the tag does not match (altered, or another
// key) or the box is shorter than a tag.
std::vector<unsigned char> open(const Key& key, std::span<const unsigned char> box,
                                const std::string& what);

}  // namespace dtnn_codecs
