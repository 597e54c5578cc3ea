#!/bin/sh
# Makes a certificate authority and certificates for the tcp communicator's TLS, for tests and
# first trials (docs/federated.md; a real deployment keeps its authority's key offline):
#
#   scripts/make-test-ca.sh [--ranks N] DIR [HOST...]
#
# DIR/ca.pem        the authority: every rank's tls_ca
# DIR/server.pem    rank 0's certificate (tls_cert) and DIR/server.key its key (tls_key): valid
#                   for the HOSTs (names or addresses; default: localhost 127.0.0.1 ::1), which
#                   are what the other ranks give as --server
# DIR/client.pem    a certificate for the other ranks, DIR/client.key its key
# DIR/rank-R.pem    with --ranks N, for R = 1 .. N-1: a certificate named for rank R ("dtnn rank R"),
#                   DIR/rank-R.key its key; rank 0 lets it join as rank R only (and with the tcp
#                   communicator's tls_bind_ranks, it requires such a certificate of every rank)
# The keys are P-256 ECDSA, readable by their owner only; the certificates last 30 days.
set -eu
ranks=0
if [ "${1:-}" = "--ranks" ]; then
  ranks=${2:?--ranks needs a number of ranks}
  case $ranks in *[!0-9]* | "") echo "$0: --ranks: expected a number, got '$ranks'" >&2; exit 2 ;; esac
  shift 2
fi
if [ $# -lt 1 ]; then
  echo "usage: $0 [--ranks N] DIR [HOST...]" >&2
  exit 2
fi
dir=$1
shift
[ $# -gt 0 ] || set -- localhost 127.0.0.1 ::1
command -v openssl >/dev/null || { echo "$0: needs openssl (Debian: apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
umask 077
san=""
for host in "$@"; do
  case $host in
    *[!0-9.]*) case $host in *:*) kind=IP ;; *) kind=DNS ;; esac ;;
    *) kind=IP ;;
  esac
  san="${san:+$san,}$kind:$host"
done
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key "$dir/ca.key"
openssl req -x509 -new -key "$dir/ca.key" -out "$dir/ca.pem" -days 30 -subj "/CN=dtnn test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
who_list="server client"
r=1
while [ "$r" -lt "$ranks" ]; do
  who_list="$who_list rank-$r"
  r=$((r + 1))
done
for who in $who_list; do
  key "$dir/$who.key"
  case $who in
    rank-*) subject="/CN=dtnn rank ${who#rank-}" ;;  # rank 0 admits it as that rank only
    *) subject="/CN=dtnn $who" ;;
  esac
  openssl req -new -key "$dir/$who.key" -out "$dir/$who.csr" -subj "$subject"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ "$who" = server ] && echo "subjectAltName=$san"
    true
  } > "$dir/$who.ext"
  openssl x509 -req -in "$dir/$who.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -out "$dir/$who.pem" -days 30 -extfile "$dir/$who.ext" 2>/dev/null
  rm -f "$dir/$who.csr" "$dir/$who.ext"
done
rm -f "$dir/ca.srl"
chmod 644 "$dir"/*.pem
echo "$dir: ca.pem, server.pem/.key (for $*), client.pem/.key${ranks:+$([ "$ranks" -gt 1 ] && echo ", rank-1.pem/.key .. rank-$((ranks - 1)).pem/.key")}"
