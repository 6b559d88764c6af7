#!/usr/bin/env bash
# Installs everything the native infrastructure needs, skipping whatever is already there, so
# up.sh can run it every time (a warm run takes well under a second).
#
#   scripts/infra/install.sh                 everything
#   scripts/infra/install.sh kafka clamav-db  only some components
#
# Components: apt, go-tools (temporal CLI, versitygw, mailpit), kafka (jars), temporal-test-server
# (jars + wrapper + class-data-sharing archive), clamav-db (signatures), schemathesis (the API
# fuzzer of test/api/fuzz, in a Python venv), temporal-server (the Temporal server, its schema tool
# and the UI server, built with Go), and for the cluster profile haproxy (apt).
# Nothing is written in the work tree: binaries and jars go to $PLATFORM_CACHE, logs of the
# slow steps to $PLATFORM_LOGS/install-*.log.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=install

STAMPS=$PLATFORM_CACHE/.stamps
mkdir -p "$STAMPS"

# ---- versions (the pins; keep docker-compose.yml in step) -------------------------------------
# postgresql-contrib-15 of the brief is a virtual package provided by postgresql-15 in Debian 12
# (contrib modules ship in the server package), so it is not listed: dpkg would never report it
# as installed and every run would call apt-get update.
APT_PACKAGES=(postgresql-15 postgresql-client-15 postgresql-contrib redis-server redis-tools
  clamav clamav-daemon clamav-testfiles curl ca-certificates)
# name | module | package path inside the module | version | how
#   install = `go install pkg@version` (falls back to `source` when that fails)
#   source  = `go build` from the module's source: mailpit, because (1) its web UI (JS/CSS) is
#             not in the Go module and must be built with npm first, and (2) `go install` of it
#             fails here (see go_build_tool).
GO_TOOLS=(
  "temporal|github.com/temporalio/cli|cmd/temporal|v1.5.1|install"
  "versitygw|github.com/versity/versitygw|cmd/versitygw|v1.7.0|install"
  "mailpit|github.com/axllent/mailpit|.|v1.30.5|source"
)
MVN_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
KAFKA_HOME=$PLATFORM_CACHE/kafka
TTS_HOME=$PLATFORM_CACHE/temporal-test-server
CLAMAV_DB=$PLATFORM_CACHE/clamav-db
# Schemathesis fuzzes the gateway from its own OpenAPI documents (test/api/fuzz); the test finds
# it at $SCHEMATHESIS_VENV/bin/schemathesis.
SCHEMATHESIS_VERSION=4.32.5
# Pinned too: test/api/fuzz/checks.py works around a CPython bug inside Hypothesis' internals.
HYPOTHESIS_VERSION=6.170.17
SCHEMATHESIS_VENV=$PLATFORM_CACHE/venv/schemathesis

# The EICAR anti-virus test string (68 bytes; harmless by design, every scanner detects it).
# Kept in two pieces so this script itself never contains it and is not flagged by scanners.
EICAR='X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD'
EICAR+='-ANTIVIRUS-TEST-FILE!$H+H*'

SUMMARY=()
note_time() { SUMMARY+=("$(printf '%-22s %s' "$1" "$2")"); }

# The files' contents only: their paths would make every clone (a CI checkout is a new folder) fetch
# the jars again and retrain the test server's class-data archive, 13 s of each bring-up.
sha_of() { sha256sum "$@" | cut -d' ' -f1 | sha256sum | cut -c1-16; }

# ---------------------------------------------------------------------------------------------
# apt: PostgreSQL 15, Redis, ClamAV
# ---------------------------------------------------------------------------------------------
pkg_installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]; }

install_apt() {
  local missing=() p t
  for p in "${APT_PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
  # Java and Maven run Kafka and the Temporal test server; Go builds the Go tools.
  command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null || missing+=(maven)
  if ((${#missing[@]} == 0)); then
    log "apt: all packages present"
    return 0
  fi
  [[ $(id -u) -eq 0 ]] || die "apt: missing ${missing[*]}; run this script as root (or install them with sudo apt-get install ${missing[*]})"
  t=$(now_ms)
  # Package scripts would start Debian's own postgres/redis/clamd (wrong ports, data or
  # users); a temporary policy-rc.d tells invoke-rc.d not to start anything. Our scripts start them.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  local rc=0
  {
    run_with_progress "apt-get update" "$PLATFORM_LOGS/install-apt.log" apt-get update &&
      run_with_progress "apt-get install ${missing[*]}" "$PLATFORM_LOGS/install-apt.log" \
        env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  } || rc=$?
  ((created_policy)) && rm -f "$policy"
  ((rc == 0)) || die "apt: installing ${missing[*]} failed (log: $PLATFORM_LOGS/install-apt.log)"
  note_time apt "$(elapsed_since "$t")"
}

# ---------------------------------------------------------------------------------------------
# Go tools: temporal CLI (dev server), versitygw (S3), mailpit (SMTP sink)
# ---------------------------------------------------------------------------------------------

# go_build_tool NAME MODULE PKGPATH VERSION HOW: `go install MODULE/PKGPATH@VERSION` into the
# cache's bin, or a build from the module's source. The source build is also the fallback: the
# module proxy here refuses the version *list* of some modules (mailpit: "reading
# .../@v/list: 403 Forbidden"), which `go install pkg@version` reads for its deprecation check,
# while `go mod download module@version` still fetches the module itself.
go_build_tool() {
  local name=$1 module=$2 pkgpath=$3 version=$4 how=$5 pkg dir src
  pkg=$module
  [[ "$pkgpath" != . ]] && pkg=$module/$pkgpath
  if [[ "$how" == install ]]; then
    echo "== $(date -Is) go install $pkg@$version"
    if GOBIN=$PLATFORM_BIN go install "$pkg@$version"; then
      return 0
    fi
    echo "== go install failed; building $module@$version from the module source instead"
  fi
  echo "== $(date -Is) go build $pkg from the source of $module@$version"
  dir=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$dir" && -d "$dir" ]] || { echo "go mod download $module@$version gave no source dir"; return 1; }
  src=$(mktemp -d "${TMPDIR:-/tmp}/platform-go-$name.XXXXXX")
  cp -r "$dir/." "$src/" && chmod -R u+w "$src"
  local ldflags="-s -w"
  if [[ "$name" == mailpit ]]; then
    # mailpit prints its version from this variable (default "dev").
    ldflags+=" -X github.com/axllent/mailpit/config.Version=$version"
    # Its web UI is embedded from server/ui/dist, built by esbuild from the npm lockfile. The
    # HTTP API (what tests use) works without it, so a failure here only costs the UI.
    if command -v npm >/dev/null &&
      (cd "$src" && npm ci --no-audit --no-fund --ignore-scripts && npm run package); then
      echo "== mailpit web UI built"
    else
      echo "== WARNING: mailpit web UI could not be built (npm missing or failed); the API works, the UI page will be blank"
    fi
  fi
  (cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$PLATFORM_BIN/$name.tmp" "./$pkgpath") || { rm -rf "$src"; return 1; }
  mv -f "$PLATFORM_BIN/$name.tmp" "$PLATFORM_BIN/$name"
  rm -rf "$src"
}

GO_PID=
GO_START=
GO_TODO=()
install_go_tools_start() {
  local entry name module pkgpath version how
  GO_TODO=()
  for entry in "${GO_TOOLS[@]}"; do
    IFS='|' read -r name module pkgpath version how <<<"$entry"
    if [[ -x "$PLATFORM_BIN/$name" ]]; then
      # Built by us before (stamp), or by a plain `go install` of the same version (build info).
      [[ "$(cat "$STAMPS/go-$name" 2>/dev/null)" == "$module@$version $how" ]] && continue
      if [[ "$how" == install ]] && command -v go >/dev/null && go version -m "$PLATFORM_BIN/$name" 2>/dev/null |
        grep -Eq "^[[:space:]]+mod[[:space:]]+${module//./\\.}[[:space:]]+${version//./\\.}([[:space:]]|\$)"; then
        echo "$module@$version $how" >"$STAMPS/go-$name"
        continue
      fi
    fi
    GO_TODO+=("$entry")
  done
  if ((${#GO_TODO[@]} == 0)); then
    log "go-tools: temporal, versitygw, mailpit present"
    return 0
  fi
  command -v go >/dev/null || die "go-tools: 'go' is not on PATH (Go >= 1.25 is needed to build ${GO_TODO[*]%%|*})"
  GO_START=$(now_ms)
  log "go-tools: building ${GO_TODO[*]%%|*} in the background (log: $PLATFORM_LOGS/install-go.log; a cold temporal build takes several minutes on 2 cores)"
  (
    set -e
    for entry in "${GO_TODO[@]}"; do
      IFS='|' read -r name module pkgpath version how <<<"$entry"
      t=$(now_ms)
      go_build_tool "$name" "$module" "$pkgpath" "$version" "$how"
      echo "$module@$version $how" >"$STAMPS/go-$name"
      echo "== built $name $version in $((($(now_ms) - t) / 1000))s"
      echo "TIME $name $((($(now_ms) - t) / 1000))s" >>"$STAMPS/go-times"
    done
  ) >>"$PLATFORM_LOGS/install-go.log" 2>&1 &
  GO_PID=$!
}

install_go_tools_wait() {
  [[ -n "$GO_PID" ]] || return 0
  local n=0 rc=0
  log "go-tools: waiting for the build"
  while kill -0 "$GO_PID" 2>/dev/null; do
    sleep 1
    n=$((n + 1))
    if ((n % 60 == 0)); then
      printf ' %dm (%s) ' $((n / 60)) "$(grep -o '^== built [a-z]*' "$PLATFORM_LOGS/install-go.log" | tail -n 1 | cut -c4-)" >&2
    elif ((n % 5 == 0)); then printf '.' >&2; fi
  done
  wait "$GO_PID" || rc=$?
  ((n >= 5)) && printf '\n' >&2
  if ((rc != 0)); then
    show_log_tail "$PLATFORM_LOGS/install-go.log" 30
    die "go-tools: build failed (exit $rc); log: $PLATFORM_LOGS/install-go.log"
  fi
  log "go-tools: built ${GO_TODO[*]%%|*} in $(elapsed_since "$GO_START")"
  note_time go-tools "$(elapsed_since "$GO_START")"
}

# ---------------------------------------------------------------------------------------------
# Maven: Kafka broker jars, Temporal test server jars
# ---------------------------------------------------------------------------------------------

# mvn_copy_deps LABEL POM DEST: copies the runtime dependencies of POM into DEST (replacing it
# whole, so jars of an older version never stay on the classpath). Skipped when DEST was filled
# from the same pom before.
mvn_copy_deps() {
  local label=$1 pom=$2 dest=$3 stamp key tmp t
  stamp=$STAMPS/$label
  key=$(sha_of "$pom")
  if [[ -d "$dest" && "$(cat "$stamp" 2>/dev/null)" == "$key" ]]; then
    log "$label: jars present ($(ls "$dest" | wc -l) in $dest)"
    return 1
  fi
  command -v mvn >/dev/null || die "$label: 'mvn' is not on PATH"
  t=$(now_ms)
  tmp=$dest.tmp
  rm -rf "$tmp"
  # -B: no colours/progress bars in the log; runtime scope = what the JVM needs to run.
  run_with_progress "$label: fetching jars from Maven Central" "$PLATFORM_LOGS/install-maven.log" \
    mvn -B -q -f "$pom" "$MVN_DEPENDENCY_PLUGIN:copy-dependencies" \
    -DincludeScope=runtime -DoutputDirectory="$tmp" ||
    die "$label: mvn dependency:copy-dependencies failed (log: $PLATFORM_LOGS/install-maven.log)"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  echo "$key" >"$stamp"
  log "$label: $(ls "$dest" | wc -l) jars, $(du -sh "$dest" | cut -f1) in $dest"
  note_time "$label jars" "$(elapsed_since "$t")"
  return 0
}

install_kafka() {
  mvn_copy_deps kafka "$REPO_ROOT/infra/kafka/pom.xml" "$KAFKA_HOME/libs" || true
}

# ---------------------------------------------------------------------------------------------
# Temporal time-skipping test server: jars + executable wrapper + CDS archive
# ---------------------------------------------------------------------------------------------

# free_port: an unused TCP port for the measurements.
free_port() {
  local p
  for p in $(shuf -i 20000-40000 -n 50); do port_open 127.0.0.1 "$p" || { echo "$p"; return 0; }; done
  return 1
}

# tts_measure PORT: seconds from spawning the wrapper to the port accepting connections.
tts_measure() {
  local port=$1 t pid ms
  t=$(now_ms)
  "$PLATFORM_BIN/temporal-test-server" "$port" >>"$PLATFORM_LOGS/install-temporal-test-server.log" 2>&1 &
  pid=$!
  while ! port_open 127.0.0.1 "$port"; do
    kill -0 "$pid" 2>/dev/null || { echo "died"; return 1; }
    (($(now_ms) - t > 20000)) && { kill "$pid"; echo "timeout"; return 1; }
    sleep 0.02
  done
  ms=$(($(now_ms) - t))
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  printf '%d.%03ds' $((ms / 1000)) $((ms % 1000))
}

install_temporal_test_server() {
  local jars_changed=0 java_bin java_id key t
  mvn_copy_deps temporal-test-server "$REPO_ROOT/infra/temporal-test-server/pom.xml" "$TTS_HOME/libs" && jars_changed=1
  java_bin=$(readlink -f "$(command -v "${JAVA_HOME:+$JAVA_HOME/bin/}java")")
  # The CDS archive only fits the exact JVM build and classpath it was made with.
  java_id=$("$java_bin" -version 2>&1 | tr '\n' ' ')
  key=$(printf '%s|%s|%s' "$java_bin" "$java_id" "$(cat "$STAMPS/temporal-test-server")" | sha256sum | cut -c1-16)
  t=$(now_ms)
  # A fixed, sorted classpath (not "libs/*", whose expansion follows directory order): the CDS
  # archive is only used when the run-time classpath matches the one it was dumped with.
  (cd "$TTS_HOME/libs" && ls -1 ./*.jar | sed "s|^\./|$TTS_HOME/libs/|" | sort | paste -sd:) |
    write_if_changed "$TTS_HOME/classpath" || true
  # The wrapper @temporalio/testing runs as `<path> <port> [extraArgs]`
  # (TestServer's own usage: "<port> <flags>", its only flag being --enable-time-skipping).
  # The SDK gives the server ~5 s to listen, so start-up is kept short: C1 only (no C2 warm-up
  # cost), a small serial-GC heap, no perf data, and the AppCDS archive when present.
  # JVM warnings go to stderr, so the server's stdout stays clean.
  write_if_changed "$PLATFORM_BIN/temporal-test-server" <<EOF || true
#!/usr/bin/env bash
# Generated by scripts/infra/install.sh: Temporal's time-skipping test server ($(basename "$(ls "$TTS_HOME"/libs/temporal-test-server-*.jar)" .jar)).
# Usage: temporal-test-server <port>
home="$TTS_HOME"
# @temporalio/testing (TestWorkflowEnvironment.createTimeSkipping) runs this as "<path> <port>" and
# switches time skipping on and off itself (lock/unlock around result()/sleep()). Started with
# --enable-time-skipping the server's clock runs free from the start and EVERY workflow of the TS
# SDK fails with "Workflow execution timed out" (checked with SDK 1.24.0 and server 1.38.0), so
# the flag is dropped here unless TTS_KEEP_ENABLE_TIME_SKIPPING=1 (for callers that want it).
args=()
for a in "\$@"; do
  if [[ "\$a" == --enable-time-skipping && -z "\${TTS_KEEP_ENABLE_TIME_SKIPPING:-}" ]]; then
    echo "temporal-test-server: ignoring --enable-time-skipping (the Temporal TS SDK controls time skipping itself; see \$0)" >&2
    continue
  fi
  args+=("\$a")
done
cds=()
if [[ -f "\$home/test-server.jsa" && -z "\${TTS_NO_CDS:-}" ]]; then
  cds=(-XX:SharedArchiveFile="\$home/test-server.jsa" -Xshare:auto)
fi
exec "$java_bin" "\${cds[@]}" \\
  -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms64m -Xmx512m -Xss1m -XX:-UsePerfData \\
  -Xlog:disable -Xlog:all=warning:stderr \\
  \${TTS_JAVA_OPTS:-} \\
  -cp "\$(cat "\$home/classpath")" io.temporal.testserver.TestServer "\${args[@]}"
EOF
  chmod 0755 "$PLATFORM_BIN/temporal-test-server"
  if ((jars_changed == 0)) && [[ -f "$TTS_HOME/test-server.jsa" && "$(cat "$STAMPS/temporal-test-server-cds" 2>/dev/null)" == "$key" ]]; then
    log "temporal-test-server: wrapper and CDS archive present ($PLATFORM_BIN/temporal-test-server)"
    return 0
  fi

  # Check the argument order: without arguments TestServer prints its usage.
  local usage
  usage=$(TTS_NO_CDS=1 "$PLATFORM_BIN/temporal-test-server" 2>&1 || true)
  grep -q '<port>' <<<"$usage" || die "temporal-test-server: unexpected usage text from TestServer: $usage"

  # Training run for the AppCDS archive: start the server, exercise the gRPC paths a test uses
  # (start/describe/terminate a workflow through the Temporal CLI when present), stop it with
  # SIGTERM so the JVM exits normally and dumps every class it loaded.
  local port pid jsa=$TTS_HOME/test-server.jsa
  port=$(free_port)
  rm -f "$jsa"
  log "temporal-test-server: training run for the class-data-sharing archive (port $port)"
  TTS_NO_CDS=1 TTS_JAVA_OPTS="-XX:ArchiveClassesAtExit=$jsa" \
    "$PLATFORM_BIN/temporal-test-server" "$port" >>"$PLATFORM_LOGS/install-temporal-test-server.log" 2>&1 &
  pid=$!
  WAIT_PID=$pid wait_for_port temporal-test-server 127.0.0.1 "$port" 60 "$PLATFORM_LOGS/install-temporal-test-server.log"
  if [[ -x "$PLATFORM_BIN/temporal" ]]; then
    local a=(--address "127.0.0.1:$port" --command-timeout 10s)
    {
      "$PLATFORM_BIN/temporal" workflow start "${a[@]}" --type CdsTraining --task-queue cds -w cds-training &&
        "$PLATFORM_BIN/temporal" workflow describe "${a[@]}" -w cds-training &&
        "$PLATFORM_BIN/temporal" workflow terminate "${a[@]}" -w cds-training
    } >>"$PLATFORM_LOGS/install-temporal-test-server.log" 2>&1 || warn "temporal-test-server: training calls failed (archive still made)"
  fi
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  [[ -f "$jsa" ]] || warn "temporal-test-server: no CDS archive was written; start-up will be slower"
  echo "$key" >"$STAMPS/temporal-test-server-cds"

  local m1 m2 m3
  port=$(free_port)
  m1=$(tts_measure "$port") || die "temporal-test-server: did not start ($m1); log: $PLATFORM_LOGS/install-temporal-test-server.log"
  m2=$(tts_measure "$port") || true
  m3=$(TTS_NO_CDS=1 tts_measure "$port") || true
  log "temporal-test-server: start-to-listening $m1 / $m2 with CDS, $m3 without (the SDK allows ~5 s)"
  note_time temporal-test-server "$(elapsed_since "$t") (start-to-listening $m1)"
}

# ---------------------------------------------------------------------------------------------
# The cluster profile: HAProxy (Debian's package), the Temporal server with its schema tool, and
# the standalone Web UI server, built from the modules the CLI's dev server embeds (same versions)
# ---------------------------------------------------------------------------------------------
install_haproxy() {
  if command -v haproxy >/dev/null; then
    log "haproxy: $(haproxy -v | head -n 1 | cut -d' ' -f1-3) present"
    return 0
  fi
  [[ $(id -u) -eq 0 ]] || die "haproxy: missing; run this script as root (or sudo apt-get install haproxy)"
  local t policy=/usr/sbin/policy-rc.d created_policy=0 rc=0
  t=$(now_ms)
  # As for the other packages: Debian's own haproxy service is not started; scripts/infra/services/haproxy.sh starts ours.
  if [[ ! -e "$policy" ]]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1; fi
  {
    run_with_progress "apt-get update" "$PLATFORM_LOGS/install-apt.log" apt-get update &&
      run_with_progress "apt-get install haproxy" "$PLATFORM_LOGS/install-apt.log" \
        env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy
  } || rc=$?
  ((created_policy)) && rm -f "$policy"
  ((rc == 0)) || die "haproxy: apt-get install failed (log: $PLATFORM_LOGS/install-apt.log)"
  note_time haproxy "$(elapsed_since "$t")"
}

# TEMPORAL_SERVER_BUILDS: binary in the cache | go package | version (go install names its binaries
# after their folders, server and sql, so each is built into a folder of its own and renamed).
TEMPORAL_SERVER_BUILDS=(
  "temporal-server-v1.29.1|go.temporal.io/server/cmd/server|v1.29.1"
  "temporal-sql-tool-v1.29.1|go.temporal.io/server/cmd/tools/sql|v1.29.1"
  "temporal-ui-server-v2.42.1|github.com/temporalio/ui-server/v2/cmd/server|v2.42.1"
)
install_temporal_server() {
  local entry name pkg version gobin t
  for entry in "${TEMPORAL_SERVER_BUILDS[@]}"; do
    IFS='|' read -r name pkg version <<<"$entry"
    if [[ -x "$PLATFORM_BIN/$name" ]]; then
      log "temporal-server: $name present"
      continue
    fi
    command -v go >/dev/null || die "temporal-server: 'go' is not on PATH (Go >= 1.25 builds $name)"
    t=$(now_ms)
    gobin=$(mktemp -d)
    run_with_progress "temporal-server: go install $pkg@$version (once; minutes on two cores)" "$PLATFORM_LOGS/install-go.log" \
      env GOBIN="$gobin" go install "$pkg@$version" || { rm -rf "$gobin"; die "temporal-server: building $name failed"; }
    mv "$gobin/$(basename "$pkg")" "$PLATFORM_BIN/$name"
    rm -rf "$gobin"
    note_time "$name" "$(elapsed_since "$t")"
  done
}

# ---------------------------------------------------------------------------------------------
# ClamAV signatures
# ---------------------------------------------------------------------------------------------
install_clamav_db() {
  local t official=() f key
  mkdir -p "$CLAMAV_DB"
  # The official database (main/daily/bytecode) when the machine has it (freshclam cannot
  # download here; on a connected machine `freshclam` fills /var/lib/clamav).
  for f in /var/lib/clamav/*.cvd /var/lib/clamav/*.cld; do [[ -f "$f" ]] && official+=("$f"); done
  if ((${#official[@]})); then
    cp -u "${official[@]}" "$CLAMAV_DB/"
  fi

  # Local signatures, always present (harmless next to the official ones):
  #  .hdb = MD5:size:name of the exact EICAR file; .ndb = the EICAR string at the start of a file
  #  (offset 0, as the EICAR convention says), so the string followed by a newline (69 bytes, as
  #  `echo` writes it) is found as well.
  local md5 size hex
  md5=$(printf '%s' "$EICAR" | md5sum | cut -d' ' -f1)
  size=$(printf '%s' "$EICAR" | wc -c)
  hex=$(printf '%s' "$EICAR" | od -An -tx1 -v | tr -d ' \n')
  {
    echo "$md5:$size:Eicar-Test-Signature"
    # ClamAV's own harmless test executable (clamav-testfiles), also inside its test archives.
    if [[ -f /usr/share/clamav-testfiles/clam.exe ]]; then
      echo "$(md5sum </usr/share/clamav-testfiles/clam.exe | cut -d' ' -f1):$(stat -c %s /usr/share/clamav-testfiles/clam.exe):ClamAV-Test-File"
    fi
  } | write_if_changed "$CLAMAV_DB/platform-test.hdb" || true
  echo "Eicar-Test-Signature:0:0:$hex" | write_if_changed "$CLAMAV_DB/platform-test.ndb" || true

  key=$(sha_of "$CLAMAV_DB"/*)
  if [[ "$(cat "$STAMPS/clamav-db" 2>/dev/null)" == "$key" ]]; then
    log "clamav-db: signatures present in $CLAMAV_DB${official:+ (official database included)}"
    return 0
  fi
  t=$(now_ms)
  ((${#official[@]})) && log "clamav-db: copied the official database (${official[*]##*/})" ||
    log "clamav-db: no official database on this machine (/var/lib/clamav is empty; freshclam cannot download here); using local EICAR signatures"
  # Prove the database works: EICAR must be FOUND, a clean file must be OK.
  local dir out rc
  dir=$(mktemp -d)
  printf '%s' "$EICAR" >"$dir/eicar.com"
  printf '%s\n' "$EICAR" >"$dir/eicar-newline.txt"
  printf 'hello, this file is clean\n' >"$dir/clean.txt"
  rc=0
  out=$(clamscan --no-summary -d "$CLAMAV_DB" "$dir/eicar.com" "$dir/eicar-newline.txt" 2>&1) || rc=$?
  echo "$out" >>"$PLATFORM_LOGS/install-clamav.log"
  [[ $rc -eq 1 && $(grep -c 'FOUND$' <<<"$out") -eq 2 ]] || { rm -rf "$dir"; die "clamav-db: clamscan did not report EICAR as FOUND (rc $rc): $out"; }
  log "clamav-db: $(head -n 1 <<<"$out")"
  rc=0
  out=$(clamscan --no-summary -d "$CLAMAV_DB" "$dir/clean.txt" 2>&1) || rc=$?
  rm -rf "$dir"
  [[ $rc -eq 0 ]] && grep -q ': OK$' <<<"$out" || die "clamav-db: clamscan did not report a clean file as OK (rc $rc): $out"
  log "clamav-db: clean file OK"
  echo "$key" >"$STAMPS/clamav-db"
  note_time clamav-db "$(elapsed_since "$t")"
}

# ---------------------------------------------------------------------------------------------
# Schemathesis: a Python venv in the cache (never in the work tree), from PyPI
# ---------------------------------------------------------------------------------------------
install_schemathesis() {
  local py t stamp=$STAMPS/schemathesis key="$SCHEMATHESIS_VERSION hypothesis $HYPOTHESIS_VERSION"
  if [[ -x "$SCHEMATHESIS_VENV/bin/schemathesis" && "$(cat "$stamp" 2>/dev/null)" == "$key" ]]; then
    log "schemathesis: $SCHEMATHESIS_VERSION present ($SCHEMATHESIS_VENV)"
    return 0
  fi
  # Schemathesis 4 needs Python >= 3.10: the newest interpreter on PATH that runs (a pyenv shim of
  # a version not selected is on PATH but does not run).
  local candidate
  py=
  for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      py=$(command -v "$candidate")
      break
    fi
  done
  [[ -n "$py" ]] || die "schemathesis: no Python >= 3.10 on PATH (python3.10 ... python3.13, python3)"
  t=$(now_ms)
  # A venv made by another Python or a half-finished install is rebuilt whole.
  rm -rf "$SCHEMATHESIS_VENV"
  run_with_progress "schemathesis: venv ($py)" "$PLATFORM_LOGS/install-schemathesis.log" \
    "$py" -m venv "$SCHEMATHESIS_VENV" || die "schemathesis: python -m venv failed (log: $PLATFORM_LOGS/install-schemathesis.log)"
  run_with_progress "schemathesis: pip install schemathesis==$SCHEMATHESIS_VERSION" "$PLATFORM_LOGS/install-schemathesis.log" \
    "$SCHEMATHESIS_VENV/bin/pip" install --disable-pip-version-check --no-input \
    "schemathesis==$SCHEMATHESIS_VERSION" "hypothesis==$HYPOTHESIS_VERSION" ||
    die "schemathesis: pip install failed (log: $PLATFORM_LOGS/install-schemathesis.log)"
  "$SCHEMATHESIS_VENV/bin/schemathesis" --version >>"$PLATFORM_LOGS/install-schemathesis.log" 2>&1 ||
    die "schemathesis: the installed CLI does not run (log: $PLATFORM_LOGS/install-schemathesis.log)"
  echo "$key" >"$stamp"
  note_time schemathesis "$(elapsed_since "$t")"
}

# ---------------------------------------------------------------------------------------------
main() {
  local all=(apt go-tools kafka temporal-test-server clamav-db schemathesis haproxy temporal-server) wanted start
  wanted=("$@")
  # Without names: what the profile runs and the tests need. The Temporal server is built in both
  # profiles: the default one's tests start one with mTLS (test/integration/temporal-tls.int.test.ts).
  if ((${#wanted[@]} == 0)); then
    wanted=(apt go-tools kafka temporal-test-server clamav-db schemathesis temporal-server)
    [[ "$PLATFORM_PROFILE" == cluster ]] && wanted+=(haproxy)
  fi
  start=$(now_ms)
  local c
  for c in "${wanted[@]}"; do
    case " ${all[*]} " in *" $c "*) ;; *) die "unknown component '$c' (known: ${all[*]})" ;; esac
  done
  want() { case " ${wanted[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

  want apt && install_apt
  # The Go builds are CPU-bound and slow; the Maven downloads are network-bound: overlap them.
  want go-tools && install_go_tools_start
  want kafka && install_kafka
  want clamav-db && install_clamav_db
  want schemathesis && install_schemathesis
  want haproxy && install_haproxy
  want go-tools && install_go_tools_wait
  want temporal-server && install_temporal_server
  # Last: its training run uses the temporal CLI when it has been built.
  want temporal-test-server && install_temporal_test_server

  if ((${#SUMMARY[@]})); then
    log "installed in $(elapsed_since "$start"):"
    printf '    %s\n' "${SUMMARY[@]}" >&2
  else
    log "everything already installed ($(elapsed_since "$start"))"
  fi
}

main "$@"
