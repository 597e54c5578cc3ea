// How the ranks of an mqtt run meet through the broker. Rank 0 draws a session (16 random bytes),
// subscribes to the ranks' topics, then announces the session and the world size, retained on
// <topic>/session. Each other rank reads the announcement (at once if it came later) and answers
// with a hello: the session, the world size it expects, and a nonce of its own. Rank 0 lets each
// rank in once; a hello for another world size, or for a rank already taken, gets a refusal with
// the reason, which the process that sent it reports. When every rank is in, rank 0 welcomes them
// (each welcome names the nonce it answers) and clears the announcement. A rank that reads a newer
// announcement (rank 0 restarted) says hello again. Every later message carries the session:
// messages of another run on the same topic are named, never summed.
#pragma once
#include <cstdint>
#include <vector>

#include "broker_link.hpp"

namespace dtnn_mqtt {

Session new_session();
std::uint64_t new_nonce();  // a process's own number, never 0

// Rank 0: until every rank is in, or an Error when the deadline passes (naming who is missing).
// Returns the nonce of the process let in as each rank (0 for rank 0).
std::vector<std::uint64_t> welcome_ranks(BrokerLink& link, int world_size, const Session& session,
                                         Deadline deadline);

// Another rank, whose process has `nonce`: its session, once rank 0 welcomed it; an Error with
// rank 0's refusal, or when the deadline passes.
Session join_run(BrokerLink& link, int rank, int world_size, std::uint64_t nonce,
                 Deadline deadline);

}  // namespace dtnn_mqtt
