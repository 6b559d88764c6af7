#!/usr/bin/env bash
# The application half of the bring-up, run by up.sh once every server answers: Node 24 and the
# npm dependencies, the build, migrations, Kafka topics, then the Temporal worker, the outbox relay,
# the audit consumer and the gateway (in the cluster profile, CLUSTER_REPLICAS of each, lib.sh).
# Processes already running the current build are left alone; a new build restarts them so
# `npm run up` always serves the code in the work tree.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=app
cd "$REPO_ROOT"

# npm itself may run on the machine's older Node; everything we start runs on the project's Node 24
# (the `node` package in devDependencies puts the real binary in node_modules/.bin).
export PATH="$REPO_ROOT/node_modules/.bin:$PATH"

# The local platform delivers webhooks to receivers on this machine (the tour's, a developer's): loopback
# targets are allowed here unless the environment says otherwise, and never in production, which refuses
# the setting (docs/decisions/events.md, Outbound webhooks).
if [[ "${NODE_ENV:-development}" != production ]]; then
  export WEBHOOKS_ALLOW_LOOPBACK=${WEBHOOKS_ALLOW_LOOPBACK:-true}
fi

install_stamp=node_modules/.platform-install.sha
# patches/ holds patch-package fixes of dependencies, applied by npm's postinstall.
lock_sha=$(sha256sum package.json package-lock.json patches/* | sha256sum | cut -d' ' -f1)
# node_modules and dist/ as their last install and build left them are kept outside the work tree, each
# with its stamp: a fresh clone of the same dependencies and sources (every CI run is one) copies them in
# seconds instead of installing for 40 and building for 12.
# restore_kept DIR STAMP KEY: copies the kept DIR in when the work tree has none and the kept one's
# stamp file (inside it) holds KEY. keep DIR: replaces the kept copy with the work tree's.
restore_kept() {
  [[ ! -e "$1" && "$(cat "$PLATFORM_CACHE/kept/$1/$2" 2>/dev/null)" == "$3" ]] || return 1
  log "$1: copied from $PLATFORM_CACHE/kept/$1 (made from the same inputs)"
  cp -a "$PLATFORM_CACHE/kept/$1" "$1"
}
keep() {
  mkdir -p "$PLATFORM_CACHE/kept"
  rm -rf "$PLATFORM_CACHE/kept/$1.new"
  cp -a "$1" "$PLATFORM_CACHE/kept/$1.new" && rm -rf "$PLATFORM_CACHE/kept/$1" && mv "$PLATFORM_CACHE/kept/$1.new" "$PLATFORM_CACHE/kept/$1"
}

if [[ ! -x node_modules/.bin/node || "$(cat "$install_stamp" 2>/dev/null)" != "$lock_sha" ]] &&
  ! restore_kept node_modules .platform-install.sha "$lock_sha"; then
  log "npm install (dependencies changed or missing)"
  # --prefer-offline: what npm's cache holds is taken without asking the registry whether it is stale (the
  # lockfile names exact versions and hashes); 38 s instead of 53.
  run_with_progress "npm install" "$PLATFORM_LOGS/npm-install.log" npm install --no-audit --no-fund --prefer-offline
  printf '%s\n' "$lock_sha" > "$install_stamp"
  keep node_modules
fi
log "node $(node --version)"

# The build is skipped when its sources are those of the last build: a restart after a crash (what
# `npm run up` is for) then takes seconds, not the half minute or more of tsc on a busy machine.
source_stamp=dist/.platform-source.sha
source_sha=$({ printf '%s\n' "$lock_sha"; cat tsconfig.json tsconfig.build.json
  find api services workflows activities workers db common modules sdk scripts -type f \( -name '*.ts' -o -name '*.json' \) -print0 |
    sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)
if [[ "$(cat "$source_stamp" 2>/dev/null)" == "$source_sha" ]]; then
  log "build: dist/ was built from these sources; not rebuilt"
elif ! restore_kept dist .platform-source.sha "$source_sha"; then
  log "build (tsc)"
  # tsc never deletes what it compiled before: a moved module would live on in dist/, and Node loads a
  # stale dist/common/config.js before dist/common/config/index.js. tsc rebuilds everything anyway.
  rm -rf dist
  run_with_progress "tsc build" "$PLATFORM_LOGS/build.log" tsc -p tsconfig.build.json
  printf '%s\n' "$source_sha" >"$source_stamp"
  keep dist
fi
# The build is the compiled code, the dependencies it runs on (a new patch of one restarts too) and this
# script, which holds how each process is started (its flags and environment).
build_sha=$({ printf '%s\n' "$lock_sha"; cat "${BASH_SOURCE[0]}"; find dist -type f -name '*.js' -print0 | sort -z | xargs -0 cat; } | sha256sum | cut -d' ' -f1)

node dist/db/migrate.js
# The data layer's module tables (DDL: the owner role); a destructive manifest change stops the bring-up here.
node dist/workers/data-provision.js
node dist/workers/topics.js
# The object store sends its bucket notifications to a topic created just above (the store checks it
# at start-up): a store started without them, for another topic or with other options (an older
# bring-up's), is restarted with this one's.
load_service s3
if [[ "$(cat "$PLATFORM_RUN/s3.settings" 2>/dev/null)" != "$(s3_settings)" ]]; then
  "$INFRA_DIR/services/s3.sh" restart
fi

# A process started from another build is stopped so it comes back on this one.
mkdir -p "$PLATFORM_RUN/app"
build_file=$PLATFORM_RUN/app/build.sha
if [[ "$(cat "$build_file" 2>/dev/null)" != "$build_sha" ]]; then
  stop_all_bg
  printf '%s\n' "$build_sha" > "$build_file"
fi

log_size() { stat -c %s "$PLATFORM_LOGS/$1" 2>/dev/null || echo 0; }

# Each process is started, then awaited by what it says (or answers) once it really works.
start_app() {
  local name=$1 logfile=$2 ready_pattern=$3 offset
  shift 3
  if bg_pid "$name" >/dev/null; then
    # A process started from a checkout since deleted (a CI clone: the faults test restarts processes from
    # the checkout it runs in) would read what it loads late from a folder that is gone: started again here.
    if [[ "$(readlink "/proc/$(bg_pid "$name")/cwd")" != *" (deleted)" ]]; then
      log "$name already running this build (pid $(bg_pid "$name"))"
      return 0
    fi
    log "$name runs from a deleted checkout; restarting it from this one"
    stop_bg "$name"
  fi
  offset=$(log_size "$logfile")
  start_bg "$name" "$logfile" "$@"
  WAIT_PID=$(bg_pid "$name") wait_until "$name" 60 "$PLATFORM_LOGS/$logfile" \
    log_says "$PLATFORM_LOGS/$logfile" "$offset" "$ready_pattern"
}

# A young generation of 4 MiB semi-spaces: the gateway allocates small short-lived objects, and V8's
# default lets them grow the resident set by ~50 MB before a scavenge (docs/decisions/audit.md, export memory).
# --expose-gc: a streamed upload asks for a young collection per 5 MiB part (common/object-parts.ts).
# glibc's malloc with a fixed mmap threshold, its large blocks on transparent huge pages: each Argon2id
# hash allocates 19 MiB on a libuv thread, and with the default (a threshold that rises to the largest
# block freed) every hash thread's arena keeps one such block for good, +80 MB of resident set after
# the first burst of logins. Mapped afresh per hash on huge pages, the block goes back to the kernel at
# no measurable cost to the hash (docs/decisions/gateway.md, "The gateway's malloc").
GATEWAY_MALLOC='glibc.malloc.mmap_threshold=4194304:glibc.malloc.hugetlb=1'
GATEWAY=(env "GLIBC_TUNABLES=$GATEWAY_MALLOC" node --max-semi-space-size=4 --expose-gc dist/api/server.js)

# start_gateway NAME HTTP_PORT GRPC_PORT [VAR=value...]: a gateway, awaited until /ready answers on
# its HTTP port and its EventService (api/grpc/server.ts) accepts connections on its gRPC port.
start_gateway() {
  local name=$1 http=$2 grpc=$3
  shift 3
  start_app "$name" "$name.log" '"msg":"' env API_PORT="$http" GRPC_PORT="$grpc" "$@" "${GATEWAY[@]}"
  WAIT_PID=$(bg_pid "$name") wait_until "$name /ready" 60 "$PLATFORM_LOGS/$name.log" http_ok "http://127.0.0.1:$http/ready"
  WAIT_PID=$(bg_pid "$name") wait_for_port "$name EventService (gRPC)" 127.0.0.1 "$grpc" 60 "$PLATFORM_LOGS/$name.log"
}

# The audit consumer is ready once it has joined its consumer group (audit.store) on the audit topic.
RELAY_READY='"msg":"\(relay is the leader\|another relay is the leader\)'
AUDIT_READY='"msg":"audit consumer joined its group"'
if [[ "$PLATFORM_PROFILE" == cluster ]]; then
  # Replicas of every process, all on the same servers; the gateways behind HAProxy, which trusts
  # nothing but itself to name the client (TRUSTED_PROXIES, docs/operations.md).
  for ((i = 1; i <= CLUSTER_REPLICAS; i++)); do
    start_app "worker-$i" "worker-$i.log" '"msg":"schedules ensured"' env WORKER_METRICS_PORT=$((9464 + i)) node dist/workers/main.js
    start_app "relay-$i" "outbox-relay-$i.log" "$RELAY_READY" node dist/workers/outbox-relay.js
    start_app "audit-consumer-$i" "audit-consumer-$i.log" "$AUDIT_READY" node dist/workers/audit-consumer.js
    start_gateway "api-$i" "$(gateway_http_port "$i")" "$(gateway_grpc_port "$i")" TRUSTED_PROXIES=127.0.0.1
  done
  wait_until "the balancer's gateways" 30 "$PLATFORM_LOGS/haproxy.log" http_ok "http://127.0.0.1:${API_PORT:-8080}/ready"
  log "balancer http://127.0.0.1:8080  EventService (gRPC) 127.0.0.1:50051  stats http://127.0.0.1:8404/stats  Temporal UI http://127.0.0.1:8233  Mailpit http://127.0.0.1:8025"
else
  start_app worker worker.log '"msg":"schedules ensured"' node dist/workers/main.js
  start_app relay outbox-relay.log "$RELAY_READY" node dist/workers/outbox-relay.js
  start_app audit-consumer audit-consumer.log "$AUDIT_READY" node dist/workers/audit-consumer.js
  start_gateway api "${API_PORT:-8080}" "${GRPC_PORT:-50051}"
  log "gateway http://127.0.0.1:${API_PORT:-8080}  EventService (gRPC) 127.0.0.1:${GRPC_PORT:-50051}  docs /api-docs/gateway  Temporal UI http://127.0.0.1:8233  Mailpit http://127.0.0.1:8025"
fi
