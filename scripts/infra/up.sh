#!/usr/bin/env bash
# Brings the whole local platform up, idempotently: what runs and answers is left alone, what is
# down (or died, e.g. kill -9) is started again.
#   npm run up                  the default profile: one process of each kind, Temporal's dev server
#   npm run up -- --cluster     the cluster profile: replicas behind HAProxy, the Temporal server on
#                               PostgreSQL (docs/operations.md); PLATFORM_PROFILE=cluster does the same
#   PLATFORM_CACHE (default ~/.cache/platform)  binaries, jars, signatures
#   PLATFORM_DATA  (default $PLATFORM_CACHE/data) server state; logs in $PLATFORM_DATA/logs
set -euo pipefail
for arg in "$@"; do
  case "$arg" in
    --cluster) export PLATFORM_PROFILE=cluster ;;
    *) echo "usage: npm run up [-- --cluster]" >&2; exit 2 ;;
  esac
done
export PLATFORM_PROFILE=${PLATFORM_PROFILE:-default}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=up
UP_START=$(now_ms)

# Another profile's processes are stopped first: both bind the same ports (7233, 8080, 50051).
previous=$(recorded_profile)
if [[ -f "$PLATFORM_PROFILE_FILE" && "$previous" != "$PLATFORM_PROFILE" ]]; then
  log "switching from the $previous profile to $PLATFORM_PROFILE: stopping the $previous profile's processes, Temporal and balancer"
  stop_all_bg
  PLATFORM_PROFILE=$previous "$INFRA_DIR/services/temporal.sh" stop
  [[ "$previous" == cluster ]] && "$INFRA_DIR/services/haproxy.sh" stop
fi
printf '%s\n' "$PLATFORM_PROFILE" >"$PLATFORM_PROFILE_FILE"
log "profile: $PLATFORM_PROFILE"

# The object store's bucket notifications go to this topic (presigned uploads, docs/decisions/files.md),
# the configuration's default (common/config/files.ts); set it empty to turn them off.
export S3_EVENT_KAFKA_TOPIC=${S3_EVENT_KAFKA_TOPIC-platform.files.store-events}

# 1. External servers: PostgreSQL, Redis, Temporal, Kafka, S3 (versitygw), ClamAV, Mailpit (and the
# cluster's HAProxy). A store started here starts without notifications: their topic is created in
# step 2, which restarts it.
S3_EVENT_KAFKA_TOPIC='' "$INFRA_DIR/services-up.sh"

# 2. The application: dependencies, build, migrations, topics, then gateways, workers, relays and audit consumers.
"$INFRA_DIR/app-up.sh"

log "platform up ($PLATFORM_PROFILE profile) in $(elapsed_since "$UP_START")"
