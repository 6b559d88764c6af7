#!/usr/bin/env bash
# Apache Kafka 3.9 in KRaft mode, one node that is broker and controller:
# broker 127.0.0.1:9092, controller 127.0.0.1:9093, run from the Maven Central jars that
# install.sh put in $PLATFORM_CACHE/kafka/libs (no release tarball, so no bin/*.sh scripts).
# Topics are created by the application (`npm run topics`); auto-creation is off.
# Beside the plain listener, SASL_SSL on 127.0.0.1:9094 as managed Kafka services offer it: TLS with
# the local CA's certificate (scripts/infra/tls.sh) and SCRAM-SHA-256/512 for the user platform
# (KAFKA_SSL, KAFKA_SASL_* in .env.example; the password is common/config/events.ts's LOCAL_KAFKA_SASL).
# A changed broker configuration (this script's, or a renewed certificate) restarts the broker on the
# next start, as the broker reads it only when it starts.
# Usage: kafka.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../tls.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
kafka_port=9092/9093
KAFKA_BROKER_PORT=9092
KAFKA_CONTROLLER_PORT=9093
KAFKA_SASL_SSL_PORT=9094
# The SCRAM user of the SASL_SSL listener: public, for tests only (production refuses this password).
KAFKA_SCRAM_USER=platform
KAFKA_SCRAM_PASSWORD=platform-kafka-secret
KAFKA_LIBS=$PLATFORM_CACHE/kafka/libs
KAFKA_DATA=$PLATFORM_DATA/kafka            # log.dirs (topic data + KRaft metadata log)
KAFKA_CONF_DIR=$PLATFORM_DATA/kafka-config # server.properties, log4j.properties, cluster-id
KAFKA_PIDFILE=$(pidfile_of kafka)
# The server certificate and key in the one PEM file a PEM keystore reads (Kafka >= 2.7), 0600.
KAFKA_KEYSTORE=$KAFKA_CONF_DIR/keystore.pem
# A digest of the configuration the running broker was started with (server.properties, keystore).
KAFKA_STARTED_CONFIG=$PLATFORM_RUN/kafka.config-digest
# Which storage (meta.properties' directory.id) already holds the SCRAM user with this password.
KAFKA_SCRAM_MARKER=$KAFKA_CONF_DIR/scram-user
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

# The keystore: the local servers' key and certificate (tls.sh) concatenated, rewritten only when they change.
_kafka_write_keystore() {
  local tmp
  tls_server_cert
  tmp=$(mktemp "$KAFKA_KEYSTORE.XXXXXX")
  cat "$(tls_key_of "$TLS_SERVER_NAME")" "$(tls_cert_of "$TLS_SERVER_NAME")" >"$tmp"
  if [[ -f "$KAFKA_KEYSTORE" ]] && cmp -s "$tmp" "$KAFKA_KEYSTORE"; then rm -f "$tmp"; else mv -f "$tmp" "$KAFKA_KEYSTORE"; fi
}

_kafka_write_config() {
  mkdir -p "$KAFKA_DATA" "$KAFKA_CONF_DIR"
  _kafka_write_keystore
  write_if_changed "$KAFKA_CONF_DIR/server.properties" <<EOF || true
# Written by scripts/infra/services/kafka.sh: single-node KRaft cluster for development/tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_BROKER_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_BROKER_PORT,SASL_SSL://127.0.0.1:$KAFKA_SASL_SSL_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL
log.dirs=$KAFKA_DATA

# SASL_SSL for the clients that ask (KAFKA_SSL, KAFKA_SASL_*): TLS with a PEM keystore, no client
# certificates, SCRAM users kept in the cluster metadata (kafka_after_start creates one). Each
# mechanism needs a JAAS entry on the listener, empty on a broker that is no SASL client itself.
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$KAFKA_KEYSTORE

# Topics are declared by the application (partitions, retention); a typo must not create one.
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
log.retention.hours=168
# An event payload may be 1 MB (docs/reference/events.md#rule-9); with its envelope it exceeds the default 1 MB batch
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

# The digest of what the broker reads at start: its configuration and its keystore.
_kafka_config_digest() { cat "$KAFKA_CONF_DIR/server.properties" "$KAFKA_KEYSTORE" | sha256sum | cut -d' ' -f1; }

kafka_spawn() {
  compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null || die "kafka: no jars in $KAFKA_LIBS; run scripts/infra/install.sh"
  _kafka_write_config
  _kafka_format_once
  # A broker killed with -9 leaves its pidfile and log.dirs/.lock behind. The pidfile is cleaned
  # by read_pidfile; .lock is an OS file lock that died with the process, so Kafka just takes it
  # again and recovers the unflushed segments on start. Nothing else to clean.
  local port held=
  for port in "$KAFKA_BROKER_PORT" "$KAFKA_CONTROLLER_PORT" "$KAFKA_SASL_SSL_PORT"; do held+=$(pids_listening "$port"); done
  if [[ -n "$held" ]]; then
    die "kafka: ports $KAFKA_BROKER_PORT/$KAFKA_CONTROLLER_PORT/$KAFKA_SASL_SSL_PORT are held by pid(s) $held that do not answer as a healthy broker; stop them first"
  fi
  _kafka_config_digest >"$KAFKA_STARTED_CONFIG"
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
kafka_stop() {
  stop_server kafka 30
  rm -f "$KAFKA_STARTED_CONFIG"
}

# The SASL_SSL listener completes a TLS handshake verified against the local CA.
_kafka_tls_ready() {
  timeout 5 openssl s_client -connect "127.0.0.1:$KAFKA_SASL_SSL_PORT" -CAfile "$TLS_CA_CERT" -verify_return_error \
    -verify_ip 127.0.0.1 </dev/null >/dev/null 2>&1
}

# kafka-configs, run from the jars (no bin/ scripts): against the plain listener, which needs no login.
_kafka_configs() {
  _java -Xmx128m -Dlog4j.configuration="file:$KAFKA_CONF_DIR/log4j.properties" -cp "$KAFKA_LIBS/*" \
    kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$KAFKA_BROKER_PORT" "$@"
}

# The SCRAM user, created once per storage (KRaft keeps credentials in the cluster metadata; Kafka
# 3.9's AlterUserScramCredentials takes one change of a user per request, hence one call per
# mechanism). The marker names the storage and the password, so a reformat or a new password adds
# it again and an unchanged broker costs no JVM.
_kafka_ensure_scram_user() {
  local want mechanism
  want="$(sed -n 's/^directory.id=//p' "$KAFKA_DATA/meta.properties") $KAFKA_SCRAM_USER $(printf '%s' "$KAFKA_SCRAM_PASSWORD" | sha256sum | cut -d' ' -f1)"
  [[ "$(cat "$KAFKA_SCRAM_MARKER" 2>/dev/null)" == "$want" ]] && return 0
  log "kafka: setting the SCRAM-SHA-256/512 credentials of user $KAFKA_SCRAM_USER"
  for mechanism in SCRAM-SHA-256 SCRAM-SHA-512; do
    _kafka_configs --alter --entity-type users --entity-name "$KAFKA_SCRAM_USER" \
      --add-config "$mechanism=[password=$KAFKA_SCRAM_PASSWORD]" >>"$(_kafka_stdout_log)" 2>&1 ||
      { show_log_tail "$(_kafka_stdout_log)"; die "kafka: could not set the $mechanism credential of $KAFKA_SCRAM_USER"; }
  done
  printf '%s\n' "$want" >"$KAFKA_SCRAM_MARKER"
}

# A broker of ours started with another configuration (an older script's, a renewed certificate) is
# restarted with the current one; one started by someone else is left alone, as redis.sh does.
kafka_after_start() {
  _kafka_write_config
  if [[ "$(cat "$KAFKA_STARTED_CONFIG" 2>/dev/null)" != "$(_kafka_config_digest)" ]]; then
    if [[ -z "$(read_pidfile "$KAFKA_PIDFILE" 2>/dev/null)" ]]; then
      warn "kafka on $KAFKA_BROKER_PORT was not started by this script: no SASL_SSL on $KAFKA_SASL_SSL_PORT (the Kafka TLS tests will fail)"
      return 0
    fi
    log "kafka: its configuration changed since it started; restarting"
    kafka_stop
    kafka_spawn
    kafka_wait
  fi
  wait_until "kafka SASL_SSL listener" 30 "$(kafka_log)" _kafka_tls_ready
  _kafka_ensure_scram_user
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli kafka "$@"; fi
