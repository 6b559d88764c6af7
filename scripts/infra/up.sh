#!/usr/bin/env bash
# Brings the whole local platform up, idempotently: what runs and answers is left alone, what is
# down (or died, e.g. kill -9) is started again.
#   PLATFORM_CACHE (default ~/.cache/platform)  binaries, jars, signatures
#   PLATFORM_DATA  (default $PLATFORM_CACHE/data) server state; logs in $PLATFORM_DATA/logs
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=up
UP_START=$(now_ms)

# The object store's bucket notifications go to this topic (presigned uploads, docs/decisions/files.md),
# the configuration's default (common/config/files.ts); set it empty to turn them off.
export S3_EVENT_KAFKA_TOPIC=${S3_EVENT_KAFKA_TOPIC-platform.files.store-events}

# 1. External servers: PostgreSQL, Redis, Temporal, Kafka, S3 (versitygw), ClamAV, Mailpit. A store
# started here starts without notifications: their topic is created in step 2, which restarts it.
S3_EVENT_KAFKA_TOPIC='' "$INFRA_DIR/services-up.sh"

# 2. The application: dependencies, build, migrations, topics, then gateway, worker and relay.
"$INFRA_DIR/app-up.sh"

log "platform up in $(elapsed_since "$UP_START")"
