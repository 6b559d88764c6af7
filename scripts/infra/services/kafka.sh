#!/usr/bin/env bash
# Apache Kafka 3.9 in KRaft mode, one node that is broker and controller:
# broker 127.0.0.1:9092, controller 127.0.0.1:9093, run from the Maven Central jars that
# install.sh put in $PLATFORM_CACHE/kafka/libs (no release tarball, so no bin/*.sh scripts).
# Topics are created by the application (`npm run topics`); auto-creation is off.
# Usage: kafka.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
kafka_port=9092/9093
KAFKA_BROKER_PORT=9092
KAFKA_CONTROLLER_PORT=9093
KAFKA_LIBS=$PLATFORM_CACHE/kafka/libs
KAFKA_DATA=$PLATFORM_DATA/kafka            # log.dirs (topic data + KRaft metadata log)
KAFKA_CONF_DIR=$PLATFORM_DATA/kafka-config # server.properties, log4j.properties, cluster-id
KAFKA_PIDFILE=$(pidfile_of kafka)
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}

kafka_log() { printf '%s\n' "$PLATFORM_LOGS/kafka.log"; }
# JVM output that does not go through log4j (crashes, GC warnings, early start-up errors).
_kafka_stdout_log() { printf '%s\n' "$PLATFORM_LOGS/kafka.stdout.log"; }

_java() { "${JAVA_HOME:+$JAVA_HOME/bin/}java" "$@"; }

# _kafka_api_versions: a real Kafka protocol round trip without a JVM: sends ApiVersions v0
# (api_key 18, correlation id 1, client id "probe") and expects correlation id 1, error code 0.
_kafka_api_versions() {
  local reply
  reply=$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    # size=15: api_key(2) api_version(2) correlation_id(4) client_id length(2) "probe"(5)
    printf "\x00\x00\x00\x0f\x00\x12\x00\x00\x00\x00\x00\x01\x00\x05probe" >&3
    head -c 10 <&3 | od -An -tx1' _ "$KAFKA_BROKER_PORT" 2>/dev/null | tr -d ' \n')
  # bytes 0-3 = response size, 4-7 = correlation id, 8-9 = error code
  [[ "${reply:8:12}" == "000000010000" ]]
}

kafka_pid() { read_pidfile "$KAFKA_PIDFILE" 2>/dev/null || pids_listening "$KAFKA_BROKER_PORT" | head -n 1; }

# Answering = the process we started is alive AND the broker answers a Kafka API request.
kafka_ready() {
  if [[ -f "$KAFKA_PIDFILE" ]]; then read_pidfile "$KAFKA_PIDFILE" >/dev/null || return 1; fi
  _kafka_api_versions
}

_kafka_write_config() {
  mkdir -p "$KAFKA_DATA" "$KAFKA_CONF_DIR"
  write_if_changed "$KAFKA_CONF_DIR/server.properties" <<EOF || true
# Written by scripts/infra/services/kafka.sh: single-node KRaft cluster for development/tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_BROKER_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_BROKER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DATA

# Topics are declared by the application (partitions, retention); a typo must not create one.
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
log.retention.hours=168
# An event payload may be 1 MB (document 3); with its envelope it exceeds the default 1 MB batch
# limit, and the outbox relay never drops an event, so the broker takes up to 2 MB.
message.max.bytes=2097152

# One node: internal topics cannot have more than one replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
# Fewer internal partitions than the default 50: the first consumer group / transactional
# producer of a fresh cluster is ready in well under a second instead of several.
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10
# Consumers of a test join at once instead of after the default 3 s.
group.initial.rebalance.delay.ms=0

# After a kill -9 the restarted broker cannot register until the controller has expired the dead
# incarnation's session (DUPLICATE_BROKER_REGISTRATION): 3 s instead of the default 9 s makes the
# heal quicker; heartbeats every 0.5 s keep a live broker far from that limit.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
EOF
  write_if_changed "$KAFKA_CONF_DIR/log4j.properties" <<EOF || true
# Written by scripts/infra/services/kafka.sh (Kafka 3.9 logs through log4j 1.x API = reload4j).
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$(kafka_log)
log4j.appender.file.MaxFileSize=50MB
log4j.appender.file.MaxBackupIndex=3
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.network.RequestChannel\$=WARN
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
EOF
}

# Format the storage once. The cluster id is kept in the config dir so a reformat after wiping
# the data dir keeps the same id; meta.properties in log.dirs marks the storage as formatted.
_kafka_format_once() {
  [[ -f "$KAFKA_DATA/meta.properties" ]] && return 0
  local id_file=$KAFKA_CONF_DIR/cluster-id id
  if [[ ! -s "$id_file" ]]; then
    # Kafka cluster ids are 16 random bytes in URL-safe base64 without padding; one starting
    # with '-' would be taken as a flag, so draw again in that case.
    id=-
    while [[ "$id" == -* ]]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'); done
    printf '%s\n' "$id" >"$id_file"
  fi
  id=$(cat "$id_file")
  log "kafka: formatting storage $KAFKA_DATA (cluster id $id)"
  _java -Xmx256m -Dlog4j.configuration="file:$KAFKA_CONF_DIR/log4j.properties" \
    -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
    -t "$id" -c "$KAFKA_CONF_DIR/server.properties" --ignore-formatted >>"$(_kafka_stdout_log)" 2>&1 ||
    { show_log_tail "$(_kafka_stdout_log)"; die "kafka: storage format failed. Log: $(_kafka_stdout_log)"; }
}

KAFKA_LOG_OFFSET_FILE=$PLATFORM_RUN/kafka.log-offset

kafka_spawn() {
  compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null || die "kafka: no jars in $KAFKA_LIBS; run scripts/infra/install.sh"
  _kafka_write_config
  _kafka_format_once
  # A broker killed with -9 leaves its pidfile and log.dirs/.lock behind. The pidfile is cleaned
  # by read_pidfile; .lock is an OS file lock that died with the process, so Kafka just takes it
  # again and recovers the unflushed segments on start. Nothing else to clean.
  if [[ -n "$(pids_listening "$KAFKA_BROKER_PORT")$(pids_listening "$KAFKA_CONTROLLER_PORT")" ]]; then
    die "kafka: ports $KAFKA_BROKER_PORT/$KAFKA_CONTROLLER_PORT are held by pid(s) $(pids_listening "$KAFKA_BROKER_PORT") $(pids_listening "$KAFKA_CONTROLLER_PORT") that do not answer as a healthy broker; stop them first"
  fi
  # Remember where the log ended, so kafka_wait only looks at the lines of this start.
  stat -c %s "$(kafka_log)" 2>/dev/null >"$KAFKA_LOG_OFFSET_FILE" || echo 0 >"$KAFKA_LOG_OFFSET_FILE"
  # shellcheck disable=SC2086 # heap options are a list
  spawn_detached "$KAFKA_PIDFILE" "$(_kafka_stdout_log)" \
    "${JAVA_HOME:+$JAVA_HOME/bin/}java" \
    $KAFKA_HEAP_OPTS \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$KAFKA_CONF_DIR/log4j.properties" \
    -Dkafka.logs.dir="$PLATFORM_LOGS" \
    -cp "$KAFKA_LIBS/*" \
    kafka.Kafka "$KAFKA_CONF_DIR/server.properties"
}

# The broker logs "Kafka Server started" once it serves clients; then a real API call must work.
_kafka_started_logged() {
  log_says "$(kafka_log)" "$(cat "$KAFKA_LOG_OFFSET_FILE" 2>/dev/null || echo 0)" 'Kafka Server started'
}

_kafka_started() { _kafka_started_logged && _kafka_api_versions; }

kafka_wait() {
  WAIT_PID=$(kafka_pid) wait_until kafka "$SVC_START_TIMEOUT" "$(kafka_log)" _kafka_started || {
    show_log_tail "$(_kafka_stdout_log)" 10
    return 1
  }
}

# A controlled shutdown takes a few seconds (it flushes and writes clean-shutdown markers).
kafka_stop() { stop_server kafka 30; }

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli kafka "$@"; fi
