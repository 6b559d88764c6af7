#!/usr/bin/env bash
# A second Temporal server with mTLS on its frontend, for test/integration/temporal-tls.int.test.ts:
# the cluster profile's server (scripts/infra/services/temporal-server.sh) with TSERVER_TLS_DIR set,
# beside the platform's own, on the ports the test chose (TSERVER_PORT, TSERVER_METRICS_PORT), with
# its own databases (temporal_tls_test, temporal_tls_test_visibility) and the namespace
# TSERVER_NAMESPACE. `start` begins from fresh databases and returns once the namespace answers over
# mTLS; `stop` stops it and drops its databases and certificate folder.
#
#   TSERVER_PORT=27233 TSERVER_METRICS_PORT=27999 TSERVER_NAMESPACE=platform-tls-test \
#     bash test/helpers/temporal-tls-server.sh start|stop
set -euo pipefail
: "${TSERVER_PORT:?the frontend port}" "${TSERVER_METRICS_PORT:?the metrics port}" "${TSERVER_NAMESPACE:?the namespace}"
export TSERVER_NAME=temporal-tls-test TSERVER_DB=temporal_tls_test TSERVER_ROLE=temporal_tls_test \
  TSERVER_DB_PASSWORD=temporal_tls_test
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/infra/services/temporal-server.sh"
TSERVER_TLS_DIR=$(tserver_dir)/tls
# shellcheck disable=SC2034 # read by log in lib.sh
LOG_TAG=$TSERVER_NAME

drop_databases() {
  as_postgres psql -X -q -p "$postgres_port" -d postgres -c 'SET client_min_messages = warning' \
    -c "DROP DATABASE IF EXISTS $TSERVER_DB WITH (FORCE)" -c "DROP DATABASE IF EXISTS ${TSERVER_DB}_visibility WITH (FORCE)"
}

case "${1:-}" in
  start)
    postgres_ready || die "PostgreSQL does not answer: bring the platform up first (npm run up)"
    [[ -x "$TSERVER_BIN" ]] || die "$TSERVER_BIN missing; run scripts/infra/install.sh temporal-server"
    tserver_stop
    drop_databases
    tserver_spawn
    tserver_wait
    # A namespace just created is known to the frontend's cache (starts, search attributes) some
    # seconds after it can be described, as scripts/infra/services/temporal.sh waits for it too.
    WAIT_PID=$(tserver_pid) wait_until "namespace $TSERVER_NAMESPACE in the frontend's cache" 60 "$(tserver_log)" \
      tserver_cli operator search-attribute list --namespace "$TSERVER_NAMESPACE"
    # The certificate folder's path, for the test.
    printf '%s\n' "$TSERVER_TLS_DIR"
    ;;
  stop)
    tserver_stop
    drop_databases
    rm -rf "$(tserver_dir)"
    ;;
  *) die "usage: $0 start|stop" ;;
esac
