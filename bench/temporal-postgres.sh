#!/usr/bin/env bash
# bench:money-flows against a second Temporal server with PostgreSQL persistence (the cluster
# profile's kind, scripts/infra/services/temporal-server.sh), beside the default profile's dev server:
#   1. builds the server once into the cache (scripts/infra/install.sh temporal-server);
#   2. sets up its two databases afresh in the platform's PostgreSQL (temporal_bench and
#      temporal_bench_visibility, owned by the role temporal_bench);
#   3. starts it on 127.0.0.1:7333 (4 history shards, the cluster's dynamic configuration);
#   4. runs `npm run bench:money-flows` against it with the flags given here (its results written to
#      bench/results/money-flows-postgres.json), stops it and drops the two databases (they hold every
#      bench workflow's history).
# The platform must be up (`npm run up`): the bench uses its PostgreSQL, Redis and Kafka.
#
#   bash bench/temporal-postgres.sh [--concurrency 32] [--seconds 10] ...
set -euo pipefail
export TSERVER_NAME=temporal-bench TSERVER_PORT=7333 TSERVER_DB=temporal_bench TSERVER_ROLE=temporal_bench \
  TSERVER_DB_PASSWORD=temporal_bench TSERVER_METRICS_PORT=8001 TSERVER_NAMESPACE=default
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/infra/services/temporal-server.sh"
LOG_TAG=temporal-postgres

drop_databases() {
  as_postgres psql -X -q -p "$postgres_port" -d postgres \
    -c "DROP DATABASE IF EXISTS $TSERVER_DB WITH (FORCE)" -c "DROP DATABASE IF EXISTS ${TSERVER_DB}_visibility WITH (FORCE)"
}

finish() {
  tserver_stop
  log "dropping $TSERVER_DB and ${TSERVER_DB}_visibility"
  drop_databases || true
}

main() {
  postgres_ready || die "PostgreSQL does not answer: bring the platform up first (npm run up)"
  "$INFRA_DIR/install.sh" temporal-server
  tserver_stop
  drop_databases
  tserver_spawn
  trap finish EXIT
  tserver_wait
  log "Temporal with PostgreSQL persistence on 127.0.0.1:$TSERVER_PORT (pid $(tserver_pid)); log $(tserver_log)"
  (cd "$REPO_ROOT" && TEMPORAL_ADDRESS=127.0.0.1:$TSERVER_PORT npm run -s bench:money-flows -- --temporal-pid "$(tserver_pid)" --results money-flows-postgres "$@")
}

main "$@"
