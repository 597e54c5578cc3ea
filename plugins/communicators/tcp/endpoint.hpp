// Sockets: rank 0's listening socket, and a joining rank's connection (retried until rank 0
// listens, or the deadline).
#pragma once
#include <string>

#include "deadline.hpp"
#include "host_port.hpp"

namespace dtnn_tcp {

using dtnn_net::Deadline;
using dtnn_net::HostPort;
using dtnn_net::parse_host_port;

// A non-blocking socket listening on the address: an Error names it and the system's reason.
int listen_on(const HostPort& address);

// The next connection on a listening socket before the deadline (-1 when it passed), non-blocking,
// with the peer's address in `peer`.
int accept_before(int listener, Deadline deadline, std::string& peer);

// A connection to the address, retried while nothing listens there yet; an Error when the
// deadline passes (naming the address and the last reason).
int connect_before(const HostPort& address, Deadline deadline);

}  // namespace dtnn_tcp
