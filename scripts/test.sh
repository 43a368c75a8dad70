#!/usr/bin/env bash
# scripts/test.sh: the project's whole check, the one CI runs (.ci/run).
#
# It starts a private RabbitMQ node and a private PostgreSQL server on
# loopback, on non-default ports, in a temporary directory, then runs, in
# order: gofmt, go vet, staticcheck, go test -race, and a short run of every
# fuzz target. Whatever it started it stops again on exit; its exit code is
# the result of the checks.
#
# On a fresh Debian 12 machine, as root, it installs what is missing
# (rabbitmq-server, postgresql, chromium, prometheus, libxml2-utils) with apt-get
# first. Not as root, a missing chromium, prometheus or xmllint (libxml2-utils) is
# only reported: the tests that need them skip then (fail under CI=true). No
# package's own service is left running: none is started at install, and a
# prometheus service that the install started anyway is stopped (it would hold
# port 9090).
#
# Exported to the tests (internal/testenv reads them):
#   FEEDKIT_AMQP_URL     amqp://guest:guest@127.0.0.1:<port>/ (guest only
#                        works over loopback, which is all we listen on)
#   FEEDKIT_PG_URL       postgres://postgres@127.0.0.1:<port>/postgres?sslmode=disable
#                        (trust auth, so no password)
#   FEEDKIT_RABBITMQCTL  a command (a generated wrapper script) that runs
#                        rabbitmqctl against OUR node with the right node name,
#                        Erlang cookie and epmd port; the tests append
#                        arguments, e.g.
#                          $FEEDKIT_RABBITMQCTL close_all_connections test
#                          $FEEDKIT_RABBITMQCTL stop_app
#                          $FEEDKIT_RABBITMQCTL start_app
#   FEEDKIT_CHROMIUM     the chromium binary that the status page test of
#                        carousel runs headless (unset when there is none)
#   FEEDKIT_PROMTOOL     the promtool binary (Debian's prometheus package), with
#                        which promfeedkit's test lints a scrape (promtool check
#                        metrics); unset when there is none
#   FEEDKIT_PROMETHEUS   the Prometheus server binary of the same package, for
#                        tests that run a server of their own on loopback to
#                        scrape the metrics; unset when there is none
#
# Bring your own services: when FEEDKIT_AMQP_URL (or FEEDKIT_PG_URL) is
# already set, that service is not started and the given URL is used. With
# your own broker, export FEEDKIT_RABBITMQCTL too if tests need to control it.
# Likewise a FEEDKIT_CHROMIUM already set (e.g. google-chrome) is kept, and
# chromium is then not installed; and FEEDKIT_PROMTOOL and FEEDKIT_PROMETHEUS,
# both set, keep prometheus from being installed.
#
# Arguments:
#   ./scripts/test.sh             the checks above
#   ./scripts/test.sh stress      the tests on a machine made slow and busy: busy
#                                 loops hog every CPU (FEEDKIT_STRESS_HOGS, default
#                                 the number of CPUs) while go test -race runs the
#                                 whole suite once, then the integration packages
#                                 (those whose tests use internal/testenv or
#                                 internal/pgtest)
#                                 FEEDKIT_STRESS_COUNT times (default 3). No test may
#                                 depend on the machine's speed: this is how we check.
#   ./scripts/test.sh crash       the durable components killed with SIGKILL at
#                                 random moments under load, and everything
#                                 counted at the end: the tests named TestCrash*,
#                                 built with -tags crash (not part of the checks;
#                                 FEEDKIT_CRASH_SEED replays a run, FEEDKIT_CRASH_KILLS
#                                 sets the kills per component)
#   ./scripts/test.sh CMD ARGS... starts the services and runs CMD with the
#                                 variables above instead of the checks (a
#                                 benchmark, one test).
#
# Other knobs:
#   FEEDKIT_FUZZTIME     how long each fuzz target runs (default 5s)
#   FEEDKIT_KEEP_TMP=1   keep the temporary directory (server logs) on exit
#   CI=true              integration tests fail instead of skipping when a
#                        service is missing (set by .ci/run)
set -euo pipefail

readonly STATICCHECK_VERSION=v0.8.2 # staticcheck 2026.2.2, built for Go 1.26

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly START_SECONDS=$SECONDS

MODE=checks
if [[ ${1:-} == stress || ${1:-} == crash ]]; then
	MODE=$1
	shift
	(($# == 0)) || { echo "test.sh: $MODE takes no arguments" >&2; exit 2; }
fi

section() {
	printf '\n==> [%4ds] %s\n' "$((SECONDS - START_SECONDS))" "$*"
}

die() {
	printf 'test.sh: %s\n' "$*" >&2
	exit 1
}

# ---------------------------------------------------------------------------
# Cleanup: stop only what this script started, then remove its temp dir.
# ---------------------------------------------------------------------------

TMP_DIR=""
RMQ_PID=""     # the broker's start script, our child, leading its own process group
EPMD_PID=""    # our private epmd, our child
RMQ_CTL=""     # the generated rabbitmqctl wrapper
PG_BIN=""      # the directory with initdb and pg_ctl
PG_DATA=""     # set once our PostgreSQL may be running
POLICY_RC_D="" # set while our temporary /usr/sbin/policy-rc.d exists
HOG_PIDS=()    # the stress mode's busy loops

# alive PID: is PID running? kill -0 alone is not enough: it succeeds on a
# zombie, and our children stay zombies until we wait for them.
alive() {
	local state
	state=$(sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[[ -n $state && $state != Z ]]
}

# stop_pid PID SECONDS [TARGET]: wait up to SECONDS for PID to exit, then
# send TERM, then KILL, to TARGET (default PID; "-PID" means its process
# group), and reap PID.
stop_pid() {
	local pid=$1 deadline=$((SECONDS + $2)) target=${3:-$1}
	while alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
	if alive "$pid"; then
		echo "process $pid did not exit in time; sending SIGTERM"
		kill -TERM -- "$target" 2>/dev/null
		deadline=$((SECONDS + 10))
		while alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
		alive "$pid" && kill -KILL -- "$target" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	if [[ -n $POLICY_RC_D ]]; then
		rm -f "$POLICY_RC_D"
	fi
	if ((${#HOG_PIDS[@]} > 0)); then
		kill "${HOG_PIDS[@]}" 2>/dev/null
		wait "${HOG_PIDS[@]}" 2>/dev/null
	fi
	if [[ -n $RMQ_PID || -n $EPMD_PID || -n $PG_DATA ]]; then
		section "stopping test services"
	fi
	if [[ -n $RMQ_PID ]]; then
		if alive "$RMQ_PID"; then
			timeout 60 "$RMQ_CTL" stop >/dev/null 2>&1 || echo "rabbitmqctl stop failed"
		fi
		stop_pid "$RMQ_PID" 30 "-$RMQ_PID"
		echo "RabbitMQ stopped"
	fi
	if [[ -n $EPMD_PID ]]; then
		kill -TERM "$EPMD_PID" 2>/dev/null
		stop_pid "$EPMD_PID" 5
	fi
	if [[ -n $PG_DATA ]]; then
		as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t 60 >/dev/null ||
			echo "pg_ctl stop failed"
		echo "PostgreSQL stopped"
	fi
	if [[ -n $TMP_DIR ]]; then
		if [[ ${FEEDKIT_KEEP_TMP:-} == 1 ]]; then
			echo "kept $TMP_DIR"
		else
			rm -rf "$TMP_DIR"
		fi
	fi
	if ((rc == 0)); then
		section "all checks passed"
	else
		section "FAILED (exit code $rc)"
	fi
	exit "$rc"
}
trap cleanup EXIT
# Turn signals into a normal exit so the EXIT trap stops the services.
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

# port_busy PORT: does anything accept connections on 127.0.0.1:PORT?
port_busy() {
	timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# free_port BASE: the first port from BASE on that nobody listens on. We
# prefer fixed ports (readable logs, easy to poke at by hand) but must not
# trip over a system service or a second checkout running its tests.
free_port() {
	local port
	for ((port = $1; port < $1 + 50; port++)); do
		if ! port_busy "$port"; then
			echo "$port"
			return 0
		fi
	done
	die "no free port in $1..$(($1 + 49))"
}

# find_pg_bin: the directory with initdb and pg_ctl. Debian keeps them off
# PATH, in /usr/lib/postgresql/<version>/bin.
find_pg_bin() {
	local initdb dir
	if initdb=$(command -v initdb) && command -v pg_ctl >/dev/null; then
		dirname "$(readlink -f "$initdb")"
		return 0
	fi
	for dir in $(printf "%s\n" /usr/lib/postgresql/*/bin | sort -V -r); do
		if [[ -x $dir/initdb && -x $dir/pg_ctl ]]; then
			echo "$dir"
			return 0
		fi
	done
	return 1
}

# find_rabbitmq_bin: the directory with the real rabbitmq-server and
# rabbitmqctl scripts. Debian's /usr/sbin ones are wrappers that, as root,
# "su rabbitmq" and cd to /var/lib/rabbitmq: that resets HOME (so the node
# would use /var/lib/rabbitmq/.erlang.cookie, not ours) and cannot write to
# our root-owned temp dir. The scripts behind them take RABBITMQ_* from the
# environment and run fine as root.
find_rabbitmq_bin() {
	local server
	if [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]]; then
		echo /usr/lib/rabbitmq/bin
	elif server=$(command -v rabbitmq-server); then
		dirname "$(readlink -f "$server")"
	else
		return 1
	fi
}

# as_pg CMD...: run a PostgreSQL command as a user it accepts. initdb and
# postgres refuse to run as root, so root uses the postgres OS user.
as_pg() {
	if ((EUID == 0)); then
		# cd: the postgres user may not be allowed into the caller's cwd.
		(cd "$TMP_DIR" && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

# ---------------------------------------------------------------------------
# Install what is missing (fresh Debian machines, CI)
# ---------------------------------------------------------------------------

need_rabbitmq=false
need_pg=false
need_chromium=false
need_prometheus=false
[[ -z ${FEEDKIT_AMQP_URL:-} ]] && need_rabbitmq=true
[[ -z ${FEEDKIT_PG_URL:-} ]] && need_pg=true
[[ -z ${FEEDKIT_CHROMIUM:-} ]] && need_chromium=true
[[ -z ${FEEDKIT_PROMTOOL:-} || -z ${FEEDKIT_PROMETHEUS:-} ]] && need_prometheus=true

packages=()
if $need_rabbitmq && ! find_rabbitmq_bin >/dev/null; then
	packages+=(rabbitmq-server)
fi
if $need_pg && ! find_pg_bin >/dev/null; then
	packages+=(postgresql)
fi
# Only the browser test needs chromium, and it can skip: a developer who is not
# root gets a note, not a failure.
if $need_chromium && ! command -v chromium >/dev/null; then
	if ((EUID == 0)); then
		packages+=(chromium)
	else
		echo "test.sh: no chromium and not root: the browser test will skip (fail under CI=true); apt-get install chromium" >&2
	fi
fi
# Likewise promtool: promfeedkit's lint of a scrape skips without it.
installing_prometheus=false
if $need_prometheus && ! { command -v promtool && command -v prometheus; } >/dev/null; then
	if ((EUID == 0)); then
		packages+=(prometheus)
		installing_prometheus=true
	else
		echo "test.sh: no promtool/prometheus and not root: promfeedkit's promtool test will skip (fail under CI=true); apt-get install prometheus" >&2
	fi
fi
# Likewise xmllint: feed/feedtest's schema tests validate the simulator's documents
# with it, and skip without it.
if ! command -v xmllint >/dev/null; then
	if ((EUID == 0)); then
		packages+=(libxml2-utils)
	else
		echo "test.sh: no xmllint and not root: feed/feedtest's schema tests will skip (fail under CI=true); apt-get install libxml2-utils" >&2
	fi
fi
if ((${#packages[@]} > 0)); then
	section "installing ${packages[*]}"
	((EUID == 0)) || die "${packages[*]} missing; install them (apt-get install ${packages[*]}) or export FEEDKIT_AMQP_URL and FEEDKIT_PG_URL"
	# The packages' postinst would start system-wide services (on 5672,
	# 4369, 5432) where no init system stops them again. We start our own
	# on other ports, so forbid that start, the usual Debian way, unless the
	# machine already has a policy (container images do).
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		POLICY_RC_D=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\n# temporary, from feedkit scripts/test.sh\nexit 101\n' >"$POLICY_RC_D"
		chmod 755 "$POLICY_RC_D"
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${packages[@]}"
	if [[ -n $POLICY_RC_D ]]; then
		rm -f "$POLICY_RC_D"
		POLICY_RC_D=""
	fi
	# A machine's own policy may have let the package start its server, on port
	# 9090: it is ours to stop, as we installed it (and, with systemd, to keep
	# from starting at boot). Our tests run any server of their own elsewhere.
	if $installing_prometheus; then
		if [[ -d /run/systemd/system ]] && systemctl is-active --quiet prometheus; then
			echo "stopping the prometheus service that its install started"
			systemctl stop prometheus
			systemctl disable --quiet prometheus
		elif [[ -x /etc/init.d/prometheus ]] && /etc/init.d/prometheus status >/dev/null 2>&1; then
			echo "stopping the prometheus service that its install started"
			/etc/init.d/prometheus stop >/dev/null
		fi
	fi
fi

if $need_chromium && chromium=$(command -v chromium); then
	export FEEDKIT_CHROMIUM=$chromium
fi
if [[ -z ${FEEDKIT_PROMTOOL:-} ]] && promtool=$(command -v promtool); then
	export FEEDKIT_PROMTOOL=$promtool
fi
if [[ -z ${FEEDKIT_PROMETHEUS:-} ]] && prometheus=$(command -v prometheus); then
	export FEEDKIT_PROMETHEUS=$prometheus
fi

if $need_rabbitmq || $need_pg; then
	TMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/feedkit-test.XXXXXX")
	# The postgres user must reach its data dir inside; the secrets in here
	# (the Erlang cookie) sit in a 0700 subdirectory.
	chmod 755 "$TMP_DIR"
fi

# ---------------------------------------------------------------------------
# RabbitMQ
# ---------------------------------------------------------------------------

start_rabbitmq() {
	local bin amqp_port dist_port epmd_port ctl_port node dir
	bin=$(find_rabbitmq_bin) || die "rabbitmq-server not found"
	dir=$TMP_DIR/rabbitmq
	mkdir -p "$dir/home" "$dir/data" "$dir/log"
	chmod 700 "$dir/home"

	amqp_port=$(free_port 5673)
	dist_port=$(free_port 25673)
	epmd_port=$(free_port 4370)
	ctl_port=$(free_port 35700) # rabbitmqctl's own node listens from here on
	node="feedkit-$$@localhost"

	# Our own cookie in our own HOME: both the node and rabbitmqctl read
	# $HOME/.erlang.cookie, and Erlang wants it private.
	head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/home/.erlang.cookie"
	chmod 400 "$dir/home/.erlang.cookie"

	printf 'listeners.tcp.1 = 127.0.0.1:%s\nloopback_users.guest = true\n' "$amqp_port" >"$dir/rabbitmq.conf"
	# No plugins: not even a system-wide list of them applies to our node.
	printf '[].\n' >"$dir/enabled_plugins"
	: >"$dir/rabbitmq-env.conf"

	# Everything the node and the CLI need to find each other and to keep
	# away from a system RabbitMQ: our env file (not /etc/rabbitmq's), our
	# config, data and logs, and our own epmd port, so that even the Erlang
	# port mapper is ours and stops with us.
	local -a env=(
		HOME="$dir/home"
		RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
		RABBITMQ_NODENAME="$node"
		ERL_EPMD_PORT="$epmd_port"
		ERL_EPMD_ADDRESS=127.0.0.1
		RABBITMQ_CTL_DIST_PORT_MIN="$ctl_port"
		RABBITMQ_CTL_DIST_PORT_MAX="$((ctl_port + 10))"
		# One scheduler that sleeps when idle: the CLI's VM otherwise spins its
		# schedulers and, on a busy machine, loses the CPU at every hand-off (a call
		# took 4-8 s beside busy loops instead of about 1 s).
		RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} +S 1 +sbwt none +sbwtdcpu none +sbwtdio none"
	)

	# The wrapper the tests get as FEEDKIT_RABBITMQCTL.
	RMQ_CTL=$dir/rabbitmqctl
	{
		echo '#!/usr/bin/env bash'
		echo '# Generated by scripts/test.sh: rabbitmqctl for the test broker.'
		printf 'export'
		printf " %q" "${env[@]}"
		printf '\nexec %q -n %q "$@"\n' "$bin/rabbitmqctl" "$node"
	} >"$RMQ_CTL"
	chmod 755 "$RMQ_CTL"

	# Start epmd ourselves, in the foreground of a background job, so we
	# hold its pid. Left to itself the node would start a daemonized epmd
	# that outlives this script.
	env "${env[@]}" epmd -port "$epmd_port" -address 127.0.0.1 </dev/null >"$dir/log/epmd.log" 2>&1 &
	EPMD_PID=$!
	local deadline=$((SECONDS + 10))
	until env "${env[@]}" epmd -port "$epmd_port" -names >/dev/null 2>&1; do
		alive "$EPMD_PID" || die "epmd exited: $(cat "$dir/log/epmd.log")"
		((SECONDS < deadline)) || die "epmd did not come up on port $epmd_port"
		sleep 0.1
	done

	echo "node $node: AMQP 127.0.0.1:$amqp_port, distribution 127.0.0.1:$dist_port, epmd 127.0.0.1:$epmd_port"
	# rabbitmq-server is a sh script that runs the VM as its child and stops
	# it cleanly on SIGTERM. setsid (which execs, keeping $!) puts it all in
	# a process group of its own, so that a last-resort SIGKILL in cleanup
	# reaches the VM too.
	(
		cd "$dir"
		exec setsid env "${env[@]}" \
			RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
			RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
			RABBITMQ_MNESIA_BASE="$dir/data" \
			RABBITMQ_LOG_BASE="$dir/log" \
			RABBITMQ_DIST_PORT="$dist_port" \
			RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
			"$bin/rabbitmq-server" </dev/null >"$dir/log/server.out" 2>&1
	) &
	RMQ_PID=$!

	# await_startup fails at once while the node is not yet registered with
	# epmd, so retry it until the deadline; stop early if the node died.
	deadline=$((SECONDS + 120))
	until "$RMQ_CTL" await_startup --timeout 30 >"$dir/log/await.out" 2>&1; do
		if ! alive "$RMQ_PID"; then
			tail -n 50 "$dir/log/server.out" >&2
			die "RabbitMQ exited during startup (log above)"
		fi
		if ((SECONDS >= deadline)); then
			cat "$dir/log/await.out" >&2
			tail -n 50 "$dir/log/server.out" >&2
			die "RabbitMQ did not start within 120s"
		fi
		sleep 0.5
	done

	export FEEDKIT_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp_port/"
	export FEEDKIT_RABBITMQCTL="$RMQ_CTL"
}

# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------

start_postgres() {
	local port dir
	PG_BIN=$(find_pg_bin) || die "initdb/pg_ctl not found"
	if ((EUID == 0)); then
		id postgres >/dev/null 2>&1 || die "running as root but there is no postgres user to run PostgreSQL as"
	fi
	dir=$TMP_DIR/postgres
	mkdir -p "$dir"
	((EUID == 0)) && chown postgres: "$dir"
	port=$(free_port 5433)

	# -U postgres: the same superuser name whoever runs this, so the URL
	# below holds. Trust auth: nothing but us can reach a loopback port in
	# a throwaway cluster. --no-sync and fsync=off: durability is no concern
	# here and both save seconds.
	as_pg "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust \
		--encoding=UTF8 --locale=C --no-sync >"$TMP_DIR/initdb.log" 2>&1 ||
		{ cat "$TMP_DIR/initdb.log" >&2; die "initdb failed"; }

	PG_DATA=$dir/data
	as_pg "$PG_BIN/pg_ctl" start -D "$PG_DATA" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c fsync=off" >/dev/null ||
		{ tail -n 50 "$dir/server.log" >&2; die "pg_ctl start failed"; }

	local deadline=$((SECONDS + 60))
	until "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; do
		((SECONDS < deadline)) || { tail -n 50 "$dir/server.log" >&2; die "PostgreSQL not ready within 60s"; }
		sleep 0.2
	done
	echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, data in $PG_DATA"

	export FEEDKIT_PG_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

# ---------------------------------------------------------------------------
# Services
# ---------------------------------------------------------------------------

section "starting test services"
services_started=$SECONDS
if $need_rabbitmq; then
	start_rabbitmq
else
	echo "FEEDKIT_AMQP_URL is set: using that broker, starting none"
fi
if $need_pg; then
	start_postgres
else
	echo "FEEDKIT_PG_URL is set: using that database, starting none"
fi
echo "services ready in $((SECONDS - services_started))s"
echo "FEEDKIT_AMQP_URL=$FEEDKIT_AMQP_URL"
echo "FEEDKIT_PG_URL=$FEEDKIT_PG_URL"
echo "FEEDKIT_RABBITMQCTL=${FEEDKIT_RABBITMQCTL:-(unset)}"
echo "FEEDKIT_CHROMIUM=${FEEDKIT_CHROMIUM:-(unset)}"
echo "FEEDKIT_PROMTOOL=${FEEDKIT_PROMTOOL:-(unset)}"
echo "FEEDKIT_PROMETHEUS=${FEEDKIT_PROMETHEUS:-(unset)}"

# With arguments, run them with the services up instead of the checks, e.g.
#   ./scripts/test.sh go test -run Reconnect -v ./feed/rabbitmq
#   ./scripts/test.sh go test -run '^$' -bench IngestRabbitMQ ./feed
if (($# > 0)); then
	section "$*"
	"$@"
	exit 0
fi

# Every Go module of the repository, as go.work lists them (the core, the examples,
# the metrics adapters), as package patterns: "./..." for the core, "./examples/..."
# and so on. From the root, in workspace mode, one go command covers them all.
mapfile -t PKGS < <(go list -m -f '{{.Dir}}' | while read -r dir; do echo ".${dir#"$PWD"}/..."; done)
echo "modules: ${PKGS[*]}"

# ---------------------------------------------------------------------------
# Stress: the tests with every CPU busy
# ---------------------------------------------------------------------------

if [[ $MODE == stress ]]; then
	hogs=${FEEDKIT_STRESS_HOGS:-$(nproc)}
	count=${FEEDKIT_STRESS_COUNT:-3}
	section "starting $hogs busy loops"
	for ((i = 0; i < hogs; i++)); do
		bash -c 'while :; do :; done' &
		HOG_PIDS+=($!)
	done
	echo "busy loops: ${HOG_PIDS[*]}"

	# A slowed machine's time is the point of this mode: go test's default of 10
	# minutes a package is not a bound on it.
	section "go test -race -count=1 ./... (beside $hogs busy loops)"
	go test -race -count=1 -timeout 60m "${PKGS[@]}"

	# The packages whose tests reach RabbitMQ or PostgreSQL, where timing is least ours.
	integration=$(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' "${PKGS[@]}" |
		awk '/feedkit\/internal\/(testenv|pgtest)( |$)/ { print $1 }')
	section "go test -race -count=$count on the integration packages (beside $hogs busy loops)"
	echo "$integration"
	# shellcheck disable=SC2086 # one package per word
	go test -race -count="$count" -timeout 60m $integration
	exit 0
fi

# ---------------------------------------------------------------------------
# Crash: components killed under load, then counted
# ---------------------------------------------------------------------------

if [[ $MODE == crash ]]; then
	section "go test -tags crash -run '^TestCrash' ./..."
	set +e
	go test -tags crash -run '^TestCrash' -count=1 -v -timeout 60m "${PKGS[@]}" | tee "${TMP_DIR:-/tmp}/crash.log" |
		grep -E '^(crash:|--- |=== RUN   TestCrash[^/]*$|ok |FAIL|panic)' | grep -vE 'no tests to run|SKIP: TestCrashChild'
	rc=${PIPESTATUS[0]}
	set -e
	section "crash counts"
	grep -E '^crash:' "${TMP_DIR:-/tmp}/crash.log" || echo "no crash test printed counts"
	exit "$rc"
fi

# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

section "go version"
go version

section "gofmt -l ."
unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
	echo "$unformatted"
	die "the files above need gofmt -w"
fi
echo "ok"

section "go.mod of each module tidy, on its own (GOWORK=off)"
for pattern in "${PKGS[@]}"; do
	dir=${pattern%/...}
	echo "--- $dir"
	(cd "$dir" && GOWORK=off go mod tidy -diff && GOWORK=off go build ./...)
done
echo "ok"

section "go vet ${PKGS[*]} (and with -tags crash)"
go vet "${PKGS[@]}"
go vet -tags crash "${PKGS[@]}"
echo "ok"

section "staticcheck ./... ($STATICCHECK_VERSION)"
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin=$(go env GOPATH)/bin
staticcheck=$gobin/staticcheck
# Reinstall only when missing, another version, or built by another Go (a
# staticcheck built by an older Go cannot load code that needs a newer one):
# the build takes ~30s.
if ! "$staticcheck" -version 2>/dev/null | grep -qF "(${STATICCHECK_VERSION#v})" ||
	[[ $(go version "$staticcheck" 2>/dev/null | awk '{print $2}') != "$(go env GOVERSION)" ]]; then
	go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$staticcheck" -version
"$staticcheck" "${PKGS[@]}"
"$staticcheck" -tags crash "${PKGS[@]}"
echo "ok"

section "go test -race -count=1 ${PKGS[*]}"
go test -race -count=1 "${PKGS[@]}"

section "fuzz targets (${FEEDKIT_FUZZTIME:-5s} each)"
# go test -list prints a package's matching names just before its
# "ok <package>" line; pair them up as "<package> <name>".
fuzz_list=$(go test -list '^Fuzz' "${PKGS[@]}" | awk '
	/^Fuzz/ { names[n++] = $1; next }
	/^ok[ \t]/ { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }
')
if [[ -z $fuzz_list ]]; then
	echo "no fuzz targets"
else
	# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
	# exceeded" as -fuzztime runs out (go.dev/issue/75804, fixed in Go 1.27): no input
	# fails, none is written. Such a run is retried once, and if the race strikes again
	# the target counts as passed with a warning: a real finding always writes its
	# input ("Failing input written to ..."), and that, a panic, or any other failure
	# fails at once.
	fuzz_one() {
		local pkg=$1 name=$2 log
		log=$(mktemp)
		# One target per run: go test -fuzz accepts only one.
		if go test -run='^$' -fuzz="^${name}\$" -fuzztime="${FEEDKIT_FUZZTIME:-5s}" "$pkg" </dev/null 2>&1 | tee "$log"; [[ ${PIPESTATUS[0]} -eq 0 ]]; then
			rm -f "$log"
			return 0
		fi
		if grep -q 'context deadline exceeded' "$log" && ! grep -qE 'Failing input written|panic:' "$log"; then
			rm -f "$log"
			return 75 # the coordinator's deadline race: worth one retry
		fi
		rm -f "$log"
		return 1
	}
	while read -r pkg name; do
		echo "--- $pkg $name"
		rc=0
		fuzz_one "$pkg" "$name" || rc=$?
		if [[ $rc -eq 75 ]]; then
			echo "--- $pkg $name: the fuzz coordinator's deadline race (go.dev/issue/75804), no failing input; again"
			rc=0
			fuzz_one "$pkg" "$name" || rc=$?
		fi
		if [[ $rc -eq 75 ]]; then
			echo "--- $pkg $name: WARNING: the deadline race again, still no failing input; counted as passed"
			rc=0
		fi
		[[ $rc -eq 0 ]] || exit 1
	done <<<"$fuzz_list"
fi
