#!/usr/bin/env bash
# S3-compatible object store: Versity S3 Gateway (posix backend) on http://127.0.0.1:9000,
# root credentials platform / platform-secret (S3_ACCESS_KEY/S3_SECRET_KEY of .env.example),
# region us-east-1, objects as plain files under $PLATFORM_DATA/s3/<bucket>/<key>.
# The bucket itself is created by the application's bring-up, not here.
# Optional: S3_EVENT_KAFKA_TOPIC=<topic> sends the gateway's bucket notifications to Kafka
# (127.0.0.1:9092); the topic must exist first (auto-creation is off). Only s3:ObjectCreated:Put is
# sent (a presigned upload's PUT: services/files/staged-objects.ts). What the running gateway was
# started with (s3_settings) is kept in $PLATFORM_RUN/s3.settings; app-up.sh restarts it when that differs.
# Usage: s3.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
s3_port=9000
S3_DIR=$PLATFORM_DATA/s3
S3_PIDFILE=$(pidfile_of s3)
S3_SETTINGS_STAMP=$PLATFORM_RUN/s3.settings
S3_EVENT_FILTER=$PLATFORM_DATA/s3-event-filter.json
S3_HEALTH_PATH=/health

# The topic of its notifications and the options that change how it serves (see s3_spawn).
s3_settings() { printf '%s keep-alive\n' "${S3_EVENT_KAFKA_TOPIC:-}"; }

s3_log() { printf '%s\n' "$PLATFORM_LOGS/s3.log"; }

s3_ready() { http_ok "http://127.0.0.1:$s3_port$S3_HEALTH_PATH"; }

s3_pid() { read_pidfile "$S3_PIDFILE" 2>/dev/null || pids_listening "$s3_port" | head -n 1; }

s3_spawn() {
  [[ -x "$PLATFORM_BIN/versitygw" ]] || die "s3: $PLATFORM_BIN/versitygw missing; run scripts/infra/install.sh"
  mkdir -p "$S3_DIR"
  local events=()
  if [[ -n "${S3_EVENT_KAFKA_TOPIC:-}" ]]; then
    write_if_changed "$S3_EVENT_FILTER" <<<'{"s3:ObjectCreated:Put": true}' || true
    events=(--event-kafka-url "${S3_EVENT_KAFKA_URL:-127.0.0.1:9092}" --event-kafka-topic "$S3_EVENT_KAFKA_TOPIC"
      --event-filter "$S3_EVENT_FILTER")
  fi
  mkdir -p "$PLATFORM_RUN"
  s3_settings > "$S3_SETTINGS_STAMP"
  # Credentials through the environment (ROOT_ACCESS_KEY/ROOT_SECRET_KEY) keep them out of `ps`.
  # --quiet: no per-request line on stdout (the log would grow with every test upload).
  # --keep-alive: connections are kept between requests (without it the store answers every request
  # with "Connection: close", and each S3 call of every process opened a TCP connection of its own).
  ROOT_ACCESS_KEY=${S3_ACCESS_KEY:-platform} ROOT_SECRET_KEY=${S3_SECRET_KEY:-platform-secret} \
    spawn_detached "$S3_PIDFILE" "$(s3_log)" \
    "$PLATFORM_BIN/versitygw" \
    --port "127.0.0.1:$s3_port" \
    --region "${S3_REGION:-us-east-1}" \
    --health "$S3_HEALTH_PATH" \
    --quiet \
    --keep-alive \
    "${events[@]}" \
    posix "$S3_DIR"
}

s3_stop() { stop_server s3 10; }

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli s3 "$@"; fi
