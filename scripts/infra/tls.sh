# shellcheck shell=bash
# The local certificate authority of the native servers, for the tests of the TLS settings
# (DATABASE_SSL_MODE, REDIS_TLS_CA_FILE, S3_CA_FILE; docs/decisions/platform.md, TLS). Functions only:
# a service script sources it after lib.sh and calls tls_server_cert (and tls_copy_for when its server
# runs as another user). Everything lives in $PLATFORM_DATA/tls and is created once:
#
#   ca.crt, ca.key                 the CA (EC P-256, 10 years); clients trust ca.crt
#   <name>.crt, <name>.key         a certificate it signed (tls_issue): server = 127.0.0.1 and localhost
#
# Other servers reuse it: tls_issue kafka DNS:localhost IP:127.0.0.1 (or a client certificate for
# mTLS, which the same extended key usage allows), then point the server at the files below.
# The CA key never leaves this folder; it is what a test would need to mint more certificates.

TLS_DIR=$PLATFORM_DATA/tls
TLS_CA_CERT=$TLS_DIR/ca.crt
TLS_CA_KEY=$TLS_DIR/ca.key
# The certificate every local server presents: the names the platform's clients dial.
TLS_SERVER_NAME=server
TLS_SERVER_SANS=(IP:127.0.0.1 DNS:localhost)
TLS_DAYS=3650

# tls_cert_of NAME / tls_key_of NAME: the files tls_issue writes.
tls_cert_of() { printf '%s/%s.crt\n' "$TLS_DIR" "$1"; }
tls_key_of() { printf '%s/%s.key\n' "$TLS_DIR" "$1"; }

# Runs "$@" holding the folder's lock, so two scripts started at once (services.sh up and a manual
# redis.sh restart) never write half a CA or sign with one the other is replacing.
_tls_locked() {
  mkdir -p "$TLS_DIR"
  chmod 0755 "$TLS_DIR"
  (
    flock 9
    "$@"
  ) 9>"$TLS_DIR/.lock"
}

# A new EC P-256 key in PKCS#8 PEM (what PostgreSQL, Redis, Go and Kafka's PEM stores all read), 0600.
_tls_new_key() {
  (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null)
}

_tls_ensure_ca() {
  if [[ -s "$TLS_CA_CERT" && -s "$TLS_CA_KEY" ]] && openssl x509 -in "$TLS_CA_CERT" -noout -checkend 2592000 >/dev/null 2>&1; then
    return 0
  fi
  log "tls: creating the local CA ($TLS_CA_CERT)"
  local key=$TLS_CA_KEY.new cert=$TLS_CA_CERT.new
  _tls_new_key "$key"
  openssl req -x509 -new -key "$key" -out "$cert" -days "$TLS_DAYS" -sha256 \
    -subj "/CN=Platform local CA/O=platform development" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" >/dev/null 2>&1 || die "tls: openssl could not create the CA"
  mv -f "$key" "$TLS_CA_KEY"
  mv -f "$cert" "$TLS_CA_CERT"
  chmod 0644 "$TLS_CA_CERT"
  # Every certificate of the old CA is worthless now.
  find "$TLS_DIR" -maxdepth 1 -name '*.crt' ! -name ca.crt -delete
}

# True when NAME's certificate exists, was signed by the current CA, names exactly SANS and lasts 30 days more.
_tls_cert_current() {
  local name=$1 cert key want have
  shift
  cert=$(tls_cert_of "$name")
  key=$(tls_key_of "$name")
  [[ -s "$cert" && -s "$key" ]] || return 1
  openssl verify -CAfile "$TLS_CA_CERT" "$cert" >/dev/null 2>&1 || return 1
  openssl x509 -in "$cert" -noout -checkend 2592000 >/dev/null 2>&1 || return 1
  want=$(printf '%s\n' "$@" | sed 's/^IP:/IP Address:/' | sort | paste -sd, -)
  have=$(openssl x509 -in "$cert" -noout -ext subjectAltName 2>/dev/null | tail -n +2 | tr -d ' ' | tr ',' '\n' | sort | paste -sd, -)
  [[ "${want// /}" == "$have" ]]
}

_tls_issue() {
  local name=$1 cert key csr ext
  shift
  _tls_ensure_ca
  _tls_cert_current "$name" "$@" && return 0
  cert=$(tls_cert_of "$name")
  key=$(tls_key_of "$name")
  log "tls: issuing $cert for $*"
  csr=$TLS_DIR/$name.csr
  ext=$TLS_DIR/$name.ext
  _tls_new_key "$key.new"
  openssl req -new -key "$key.new" -out "$csr" -subj "/CN=${1#*:}/O=platform development" >/dev/null 2>&1 ||
    die "tls: openssl could not create the request of $name"
  {
    printf 'basicConstraints=critical,CA:FALSE\n'
    printf 'keyUsage=critical,digitalSignature\n'
    # Both: a server certificate, or the client certificate of mTLS (Temporal, Kafka).
    printf 'extendedKeyUsage=serverAuth,clientAuth\n'
    printf 'subjectAltName=%s\n' "$(IFS=,; printf '%s' "$*")"
  } >"$ext"
  openssl x509 -req -in "$csr" -CA "$TLS_CA_CERT" -CAkey "$TLS_CA_KEY" -set_serial "0x$(openssl rand -hex 16)" \
    -days "$TLS_DAYS" -sha256 -extfile "$ext" -out "$cert.new" >/dev/null 2>&1 || die "tls: openssl could not sign $name"
  rm -f "$csr" "$ext"
  mv -f "$key.new" "$key"
  mv -f "$cert.new" "$cert"
  chmod 0644 "$cert"
}

# tls_issue NAME SAN...: $TLS_DIR/NAME.crt and NAME.key, signed by the local CA (created first when
# missing) for the subject alternative names given (IP:127.0.0.1, DNS:localhost, ...). Does nothing
# when a current certificate for exactly those names exists; a new one replaces it otherwise.
tls_issue() {
  (($# >= 2)) || die "usage: tls_issue NAME SAN..."
  _tls_locked _tls_issue "$@"
}

# tls_server_cert: the certificate of the local servers (127.0.0.1 and localhost); its files are
# $(tls_cert_of server) and $(tls_key_of server), and $TLS_CA_CERT is what clients trust.
tls_server_cert() { tls_issue "$TLS_SERVER_NAME" "${TLS_SERVER_SANS[@]}"; }

# tls_copy_for USER DIR [NAME]: NAME's certificate and key (default: the server's) and the CA
# certificate copied into DIR as NAME.crt, NAME.key and ca.crt, owned by USER, the key 0600: a
# server that runs as its own user (PostgreSQL as postgres) refuses a key others can read and may
# not be able to enter $PLATFORM_DATA. Returns 0 when it changed a file, 1 when all were current.
tls_copy_for() {
  local user=$1 dir=$2 name=${3:-$TLS_SERVER_NAME} changed=1 src dest mode
  install -d -o "$user" -m 0755 "$dir"
  for src in "$(tls_cert_of "$name")" "$(tls_key_of "$name")" "$TLS_CA_CERT"; do
    dest=$dir/$(basename "$src")
    mode=0644
    [[ "$src" == *.key ]] && mode=0600
    if [[ -f "$dest" ]] && cmp -s "$src" "$dest" && [[ "$(stat -c '%U %a' "$dest")" == "$user ${mode#0}" ]]; then
      continue
    fi
    install -o "$user" -m "$mode" "$src" "$dest"
    changed=0
  done
  return $changed
}
