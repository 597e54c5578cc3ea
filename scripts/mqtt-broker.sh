#!/bin/sh
# Runs a Mosquitto broker for dtnn's mqtt communicator, in the foreground, with its own
# configuration (for tests and first trials; docs/federated.md):
#
#   scripts/mqtt-broker.sh DIR PORT [CERTS] [ADDRESS]
#
# DIR      where the configuration (DIR/mosquitto.conf) and the broker's log (DIR/mosquitto.log) go
# PORT     the port it listens on
# CERTS    a folder made by scripts/make-test-ca.sh: the broker then speaks TLS 1.3 only, presents
#          CERTS/server.pem, and lets in only clients whose certificate CERTS/ca.pem signed
#          (without CERTS: plain MQTT, anyone who reaches the port may publish and subscribe)
# ADDRESS  the address it listens on (default 127.0.0.1; 0.0.0.0 for every interface)
#
# Needs Debian's mosquitto (apt-get install mosquitto). The broker keeps no state on disk, queues
# up to 100000 messages per client, and writes who connects and who is refused to its log.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 DIR PORT [CERTS] [ADDRESS]" >&2
  exit 2
fi
dir=$1 port=$2 certs=${3:-} address=${4:-127.0.0.1}
broker=$(command -v mosquitto || echo /usr/sbin/mosquitto)
[ -x "$broker" ] || { echo "$0: needs mosquitto (Debian: apt-get install mosquitto)" >&2; exit 1; }
mkdir -p "$dir"
conf="$dir/mosquitto.conf"
{
  echo "listener $port $address"
  echo "persistence false"
  echo "set_tcp_nodelay true"  # requests and answers: no Nagle delay
  echo "max_queued_messages 100000"
  echo "log_dest file $(cd "$dir" && pwd)/mosquitto.log"
  echo "log_type error"
  echo "log_type warning"
  echo "log_type notice"
  echo "log_type information"
  echo "connection_messages true"
  # As root, mosquitto would switch to its own user, who cannot read the keys.
  [ "$(id -u)" -eq 0 ] && echo "user root"
  if [ -n "$certs" ]; then
    c=$(cd "$certs" && pwd)
    echo "cafile $c/ca.pem"
    echo "certfile $c/server.pem"
    echo "keyfile $c/server.key"
    echo "tls_version tlsv1.3"
    echo "require_certificate true"
    echo "use_identity_as_username true"
    echo "allow_anonymous false"
  else
    echo "allow_anonymous true"
  fi
} > "$conf"
exec "$broker" -c "$conf"
