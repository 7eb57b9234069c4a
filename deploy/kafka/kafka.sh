#!/usr/bin/env bash
# Local single-node Apache Kafka broker (KRaft, combined broker+controller)
# run straight from Maven Central jars: no Docker, no Kafka tarball.
#
#   kafka.sh fetch    copy the runtime jars into the cache dir (once per pom.xml)
#   kafka.sh start    fetch if needed, format storage, start the broker in the
#                     background and wait until it serves admin requests
#   kafka.sh stop     SIGTERM, wait up to 30 s, then SIGKILL (idempotent)
#   kafka.sh status   exit 0 only if the broker is running AND answers requests
#   kafka.sh logs     tail the broker log
#   kafka.sh clean    stop, then delete the data dir
#
# Environment (all optional):
#   KAFKA_PORT              client listener port            (19092)
#   KAFKA_CONTROLLER_PORT   KRaft controller listener port  (19093)
#   KAFKA_CACHE_DIR         jar cache (libs/ under it)      ($HOME/.cache/c402-kafka)
#   KAFKA_DATA_DIR          config, logs, data, pid file    (/tmp/c402-kafka-$KAFKA_PORT)
#   KAFKA_READY_TIMEOUT     seconds start waits for ready   (90)
#   KAFKA_STOP_TIMEOUT      seconds stop waits before KILL  (30)
#   KAFKA_HEAP              broker heap (-Xms/-Xmx)         (512m)
#   KAFKA_LOG_LEVEL         root level of the broker log    (INFO)
#   KAFKA_CLEAN=1           start from an empty data dir
#   KAFKA_CLUSTER_ID        22-char cluster id for a new data dir (random)
#   KAFKA_SECURE_PORT       SASL_SSL listener port          ($KAFKA_PORT + 2)
#
# Beside the plaintext listener the broker serves SASL_SSL on KAFKA_SECURE_PORT, so the
# clients' TLS and SASL settings are tested against a broker that requires them: a
# self-signed certificate for 127.0.0.1 (keytool; its PEM is <data dir>/secure/ca.pem,
# for NODE_EXTRA_CA_CERTS), and the user c402 / c402-test-password for PLAIN,
# SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM users are written when the storage is formatted:
# start with KAFKA_CLEAN=1 once after upgrading from a broker without them).
#   JAVA                    java binary                     (java)
#   MVN                     maven binary                    (mvn)
# See README.md beside this file.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$SCRIPT_DIR/pom.xml"

JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"
PORT="${KAFKA_PORT:-19092}"
CTRL_PORT="${KAFKA_CONTROLLER_PORT:-19093}"
HOST=127.0.0.1
CACHE_DIR="${KAFKA_CACHE_DIR:-${HOME:-/tmp}/.cache/c402-kafka}"
DATA_DIR="${KAFKA_DATA_DIR:-/tmp/c402-kafka-$PORT}"
READY_TIMEOUT="${KAFKA_READY_TIMEOUT:-90}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
HEAP="${KAFKA_HEAP:-512m}"
SECURE_PORT="${KAFKA_SECURE_PORT:-$((PORT + 2))}"
SASL_USER=c402
SASL_PASSWORD=c402-test-password
KEYSTORE_PASSWORD=c402-test-keystore
LOG_LEVEL="${KAFKA_LOG_LEVEL:-INFO}"

PROPS="$DATA_DIR/server.properties"
LOG4J_CONF="$DATA_DIR/log4j2.xml"
PROBE_LOG4J_CONF="$DATA_DIR/log4j2-probe.xml"
PROBE_PROPS="$DATA_DIR/probe.properties"
PID_FILE="$DATA_DIR/kafka.pid"
LOG_DIR="$DATA_DIR/logs"
BROKER_LOG="$LOG_DIR/server.log"
STDOUT_LOG="$LOG_DIR/kafka.out"
KRAFT_DIR="$DATA_DIR/kraft-data"
SECURE_DIR="$DATA_DIR/secure"

# Light JVM flags: the machine has 2 cores, keep startup and memory small.
JVM_COMMON=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ActiveProcessorCount=2
  -Djava.awt.headless=true -Dfile.encoding=UTF-8)

log() { printf 'kafka: %s\n' "$*"; }
err() { printf 'kafka: %s\n' "$*" >&2; }
die() { err "$*"; exit 1; }

# Absolute path of the jar dir; CACHE_DIR may be relative.
libs_dir() {
  mkdir -p "$CACHE_DIR"
  printf '%s/libs' "$(cd "$CACHE_DIR" && pwd)"
}

# Serialise fetch/start/stop/clean of one cache/data dir (parallel CI steps).
# fd 9 is closed for the broker so it never holds the lock.
take_lock() {
  command -v flock >/dev/null 2>&1 || return 0
  mkdir -p "$(dirname "$1")"
  exec 9>"$1"
  flock -w 180 9 || die "could not lock $1 within 180 s"
}

pom_hash() { sha256sum "$POM" | cut -c1-16; }

check_java() {
  command -v "$JAVA" >/dev/null 2>&1 || die "java not found (Kafka 4.x needs Java 17+)"
  local v
  v="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')"
  case "$v" in
    1.*|9|10|11|12|13|14|15|16) die "Java $v found; Kafka 4.x needs Java 17+" ;;
  esac
}

# ---------------------------------------------------------------- fetch ----
cmd_fetch() {
  local libs marker tmp
  libs="$(libs_dir)"
  take_lock "$CACHE_DIR/.fetch.lock"
  marker="$libs/.fetched-$(pom_hash)"
  if [[ -f "$marker" ]]; then
    log "jars already in $libs"
    return 0
  fi
  command -v "$MVN" >/dev/null 2>&1 || die "mvn not found (needed once to fetch the Kafka jars)"
  tmp="$libs.tmp.$$"
  rm -rf "$tmp"
  log "fetching Kafka runtime jars into $libs ..."
  local t0=$SECONDS
  if ! "$MVN" -q -B -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" -f "$POM" 2>&1 \
      | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^[[:space:]]*$/d' >&2; then
    rm -rf "$tmp"
    die "maven could not fetch the jars (see output above)"
  fi
  ls "$tmp"/kafka_2.13-*.jar >/dev/null 2>&1 || { rm -rf "$tmp"; die "fetch produced no kafka jar in $tmp"; }
  rm -rf "$libs"
  mv "$tmp" "$libs"
  touch "$libs/.fetched-$(pom_hash)"
  exec 9>&-
  log "fetched $(find "$libs" -maxdepth 1 -name "*.jar" | wc -l) jars in $((SECONDS - t0)) s"
}

ensure_libs() {
  local libs
  libs="$(libs_dir)"
  [[ -f "$libs/.fetched-$(pom_hash)" ]] || cmd_fetch
  LIBS="$libs"
}

# ------------------------------------------------------------- helpers ----
# Pid of our broker if it is alive, else nothing (and a stale pid file is removed).
running_pid() {
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid="$(tr -dc '0-9' <"$PID_FILE")"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null \
     && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $PROPS"; then
    printf '%s' "$pid"
  else
    rm -f "$PID_FILE"
  fi
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# One admin-client round trip: list topics. Exit 0 iff the broker answered.
probe() {
  timeout 30 "$JAVA" -Xms32m -Xmx128m "${JVM_COMMON[@]}" \
    -Dlog4j2.configurationFile="$PROBE_LOG4J_CONF" \
    -cp "$LIBS/*" org.apache.kafka.tools.TopicCommand \
    --bootstrap-server "$HOST:$PORT" --command-config "$PROBE_PROPS" --list \
    >>"$LOG_DIR/probe.log" 2>&1
}

tail_log() {
  local f
  for f in "$STDOUT_LOG" "$BROKER_LOG"; do
    if [[ -s "$f" ]]; then
      err "---- last lines of $f ----"
      tail -n "${1:-40}" "$f" >&2
    fi
  done
}

random_cluster_id() {
  # 16 random bytes, base64url without padding = 22 chars (like kafka-storage random-uuid).
  head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22
}

# The secure listener's certificate: self-signed for 127.0.0.1, made once per data dir.
write_certificate() {
  mkdir -p "$SECURE_DIR"
  [[ -s "$SECURE_DIR/broker.p12" && -s "$SECURE_DIR/ca.pem" ]] && return 0
  command -v keytool >/dev/null 2>&1 || die "keytool not found (it comes with the JDK)"
  rm -f "$SECURE_DIR/broker.p12" "$SECURE_DIR/ca.pem"
  keytool -genkeypair -alias broker -keyalg EC -groupname secp256r1 -validity 3650 -dname "CN=127.0.0.1" \
    -ext "SAN=ip:127.0.0.1,dns:localhost" -keystore "$SECURE_DIR/broker.p12" -storetype PKCS12 \
    -storepass "$KEYSTORE_PASSWORD" -keypass "$KEYSTORE_PASSWORD" >>"$LOG_DIR/format.log" 2>&1
  keytool -exportcert -rfc -alias broker -keystore "$SECURE_DIR/broker.p12" -storetype PKCS12 \
    -storepass "$KEYSTORE_PASSWORD" >"$SECURE_DIR/ca.pem" 2>>"$LOG_DIR/format.log"
}

write_config() {
  mkdir -p "$DATA_DIR" "$LOG_DIR" "$KRAFT_DIR"
  write_certificate
  cat >"$PROPS" <<EOF
# Generated by deploy/kafka/kafka.sh -- rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CTRL_PORT
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CTRL_PORT,SASL_SSL://$HOST:$SECURE_PORT
advertised.listeners=PLAINTEXT://$HOST:$PORT,SASL_SSL://$HOST:$SECURE_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL
inter.broker.listener.name=PLAINTEXT

# The secure listener: TLS with the certificate above, then SASL (PLAIN or SCRAM).
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASSWORD";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$SECURE_DIR/broker.p12
listener.name.sasl_ssl.ssl.keystore.password=$KEYSTORE_PASSWORD
listener.name.sasl_ssl.ssl.key.password=$KEYSTORE_PASSWORD
log.dirs=$KRAFT_DIR

auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0

# Small machine: few threads.
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
EOF

  cat >"$LOG4J_CONF" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by deploy/kafka/kafka.sh -->
<Configuration status="WARN" shutdownHook="disable">
  <Appenders>
    <RollingFile name="file" fileName="$BROKER_LOG" filePattern="$BROKER_LOG.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <Policies><SizeBasedTriggeringPolicy size="20 MB"/></Policies>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Root level="$LOG_LEVEL"><AppenderRef ref="file"/></Root>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="org.apache.kafka.clients" level="WARN"/>
    <Logger name="org.apache.kafka.common.utils.AppInfoParser" level="WARN"/>
  </Loggers>
</Configuration>
EOF

  cat >"$PROBE_LOG4J_CONF" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="ERROR">
  <Appenders><Console name="err" target="SYSTEM_ERR"><PatternLayout pattern="%d{HH:mm:ss} %p %m%n"/></Console></Appenders>
  <Loggers><Root level="ERROR"><AppenderRef ref="err"/></Root></Loggers>
</Configuration>
EOF

  # Short admin-client timeouts so a probe against a not-yet-ready broker
  # fails fast instead of retrying for the default 60 s.
  cat >"$PROBE_PROPS" <<'EOF'
request.timeout.ms=5000
default.api.timeout.ms=8000
socket.connection.setup.timeout.ms=2000
socket.connection.setup.timeout.max.ms=3000
reconnect.backoff.max.ms=500
retry.backoff.max.ms=500
EOF
}

format_storage() {
  local cid_file="$DATA_DIR/cluster.id" cid
  if [[ -s "$cid_file" ]]; then
    cid="$(cat "$cid_file")"
  else
    cid="${KAFKA_CLUSTER_ID:-$(random_cluster_id)}"
    printf '%s\n' "$cid" >"$cid_file"
  fi
  [[ ${#cid} -eq 22 ]] || die "cluster id '$cid' is not 22 characters"
  # Static quorum (controller.quorum.voters), so no --standalone.
  "$JAVA" -Xmx256m "${JVM_COMMON[@]}" -Dlog4j2.configurationFile="$PROBE_LOG4J_CONF" \
    -cp "$LIBS/*" kafka.tools.StorageTool format --ignore-formatted \
    --add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$SASL_PASSWORD]" \
    --add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PASSWORD]" \
    -t "$cid" -c "$PROPS" >>"$LOG_DIR/format.log" 2>&1
}

wait_ready() {
  local pid="$1" deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      err "broker process $pid exited during startup"
      tail_log 60
      return 1
    fi
    if probe; then
      return 0
    fi
    if (( SECONDS >= deadline )); then
      err "broker not ready after ${READY_TIMEOUT} s"
      tail_log 60
      return 1
    fi
    sleep 2
  done
}

# ---------------------------------------------------------------- start ----
cmd_start() {
  check_java
  ensure_libs
  take_lock "$DATA_DIR.lock"
  local pid t0=$SECONDS
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    log "already running (pid $pid), checking readiness"
    wait_ready "$pid" || exit 1
    log "ready at $HOST:$PORT"
    return 0
  fi

  local p
  for p in "$PORT" "$CTRL_PORT" "$SECURE_PORT"; do
    if port_open "$p"; then
      die "port $HOST:$p is already in use by another process (set KAFKA_PORT / KAFKA_CONTROLLER_PORT)"
    fi
  done

  if [[ "${KAFKA_CLEAN:-0}" == 1 && -d "$DATA_DIR" ]]; then
    log "KAFKA_CLEAN=1: removing $DATA_DIR"
    rm -rf "$DATA_DIR"
  fi

  write_config
  : >"$LOG_DIR/probe.log"
  if ! format_storage; then
    err "formatting $KRAFT_DIR failed; recreating the data dir from scratch"
    sed 's/^/  /' "$LOG_DIR/format.log" | tail -n 10 >&2 || true
    rm -rf "$DATA_DIR"
    write_config
    format_storage || { cat "$LOG_DIR/format.log" >&2; die "storage format failed"; }
  fi

  # Keep the previous run's logs aside so a failure shows only this run's.
  [[ -f "$BROKER_LOG" ]] && mv -f "$BROKER_LOG" "$BROKER_LOG.prev"
  [[ -f "$STDOUT_LOG" ]] && mv -f "$STDOUT_LOG" "$STDOUT_LOG.prev"
  rm -f "$BROKER_LOG".[0-9]*

  log "starting broker (data dir $DATA_DIR)"
  local launcher=()
  command -v setsid >/dev/null 2>&1 && launcher=(setsid)
  # setsid: detach from the caller's session so Ctrl-C / job control in the
  # calling shell does not reach the broker. Not forking (-f) keeps $! == java pid.
  nohup "${launcher[@]}" "$JAVA" "-Xms$HEAP" "-Xmx$HEAP" "${JVM_COMMON[@]}" \
    -Dlog4j2.configurationFile="$LOG4J_CONF" -Dkafka.logs.dir="$LOG_DIR" \
    -cp "$LIBS/*" kafka.Kafka "$PROPS" \
    </dev/null >"$STDOUT_LOG" 2>&1 9>&- &
  pid=$!
  printf '%s\n' "$pid" >"$PID_FILE"

  if ! wait_ready "$pid"; then
    # Do not leave a half-started broker behind (logs stay in $LOG_DIR).
    if kill -0 "$pid" 2>/dev/null; then
      err "stopping the broker that did not become ready"
      terminate "$pid" 10
    fi
    rm -f "$PID_FILE"
    exit 1
  fi
  log "ready at $HOST:$PORT (pid $pid, $((SECONDS - t0)) s)"
}

# ----------------------------------------------------------------- stop ----
# SIGTERM (controlled shutdown), wait up to $2 s, then SIGKILL.
terminate() {
  local pid="$1" wait_s="$2"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + wait_s))
  while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    err "pid $pid still alive after ${wait_s} s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
}

cmd_stop() {
  take_lock "$DATA_DIR.lock"
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    rm -f "$PID_FILE"
    log "not running"
    return 0
  fi
  log "stopping pid $pid"
  terminate "$pid" "$STOP_TIMEOUT"
  rm -f "$PID_FILE"
  log "stopped"
}

# --------------------------------------------------------------- status ----
cmd_status() {
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    log "not running"
    exit 3
  fi
  LIBS="$(libs_dir)"
  mkdir -p "$LOG_DIR"
  if probe; then
    log "running (pid $pid) and ready at $HOST:$PORT"
  else
    log "running (pid $pid) but not answering at $HOST:$PORT"
    exit 1
  fi
}

cmd_logs() {
  [[ -f "$BROKER_LOG" ]] || die "no log at $BROKER_LOG"
  tail -n "${1:-100}" "$BROKER_LOG"
}

cmd_clean() {
  cmd_stop
  rm -rf "$DATA_DIR" "$DATA_DIR.lock"
  log "removed $DATA_DIR"
}

usage() {
  sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

case "${1:-}" in
  fetch)  cmd_fetch ;;
  start)  cmd_start ;;
  stop)   cmd_stop ;;
  status) cmd_status ;;
  logs)   shift; cmd_logs "$@" ;;
  clean)  cmd_clean ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
