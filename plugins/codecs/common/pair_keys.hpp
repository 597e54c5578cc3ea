// Pairwise keys for the codecs that hide values from the transport: every pair of ranks agrees a
// key by X25519, each rank from a key pair made for this run, the public halves allgathered;
// HKDF-SHA256 turns each shared secret into the pair's key, bound to the purpose (the codec's
// salt), to both ranks and to both public keys, so the two ranks derive the same key and no other
// pair, and no other purpose, does. secagg masks with them; ckks sends its secret key sealed by
// them (sealed_box.hpp).
#pragma once
#include <array>
#include <string>
#include <vector>

namespace dtnn {
class Communicator;
}

namespace dtnn_codecs {

using Key = std::array<unsigned char, 32>;

// Makes this rank's key pair, allgathers the public keys and derives a key with every other rank
// (keys[comm.rank()] is left zero); every rank of comm calls it at the same point. `who` begins
// each error ("secagg", "ckks"); `salt` names the purpose. An Error names a rank whose public key
// gives no shared secret (a low-order point) or repeats another rank's.
std::vector<Key> agree_pair_keys(dtnn::Communicator& comm, const std::string& who,
                                 const std::string& salt);

// OpenSSL's reason for its latest failure, its error queue emptied.
std::string openssl_reason();

}  // namespace dtnn_codecs
