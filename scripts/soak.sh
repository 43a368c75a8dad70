#!/usr/bin/env bash
# scripts/soak.sh: the resident memory of examples/oddsfeed over a long run.
#
#   ./scripts/soak.sh [DURATION [RATE [EXTRA FLAGS...]]]     # default: 10m 5000
#   ./scripts/soak.sh 10m 5000 -amqp amqp://guest:guest@127.0.0.1:5672/
#
# It builds the example, runs it for DURATION at RATE messages per second (with its
# outage a third of the way in), reads its resident set size (VmRSS) from /proc every
# 5 seconds, and prints the samples, then the first and the last minute's figures (the
# largest sample, and the mean) and the growth from one to the other. It fails when the
# run fails (a message lost or reordered), when the last minute's largest sample is over
# FEEDKIT_SOAK_MAX_MB (default 150), or, on a run of two minutes or more, when it is more
# than 10% above the first minute's largest (memory that grows with the run: the first
# minute holds the warm-up, after which the figure must stay flat).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

duration=${1:-10m}
rate=${2:-5000}
shift $(($# < 2 ? $# : 2))
max_mb=${FEEDKIT_SOAK_MAX_MB:-150}
interval=5

tmp=$(mktemp -d "${TMPDIR:-/tmp}/feedkit-soak.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/oddsfeed" ./examples/oddsfeed

"$tmp/oddsfeed" -duration "$duration" -rate "$rate" -progress 1m "$@" >"$tmp/out" 2>&1 &
pid=$!
echo "soak: examples/oddsfeed -duration $duration -rate $rate $*, pid $pid, RSS every ${interval}s"
start=$SECONDS
: >"$tmp/rss"
while kill -0 "$pid" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
	[[ -n $rss ]] && echo "$((SECONDS - start)) $rss" >>"$tmp/rss"
	sleep "$interval"
done
rc=0
wait "$pid" || rc=$?
cat "$tmp/out"
echo
awk -v max_mb="$max_mb" '
	{ t[NR] = $1; kb[NR] = $2; n = NR }
	END {
		if (n == 0) { print "soak: no samples"; exit 1 }
		end = t[n]
		for (i = 1; i <= n; i++) {
			if (t[i] < 60) { fs += kb[i]; fn++; if (kb[i] > fmax) fmax = kb[i] }
			if (t[i] > end - 60) { ls += kb[i]; ln++; if (kb[i] > lmax) lmax = kb[i] }
		}
		printf "RSS (MB)            largest   mean   samples\n"
		printf "  first minute      %7.1f %6.1f   %d\n", fmax / 1024, fs / fn / 1024, fn
		printf "  last minute       %7.1f %6.1f   %d\n", lmax / 1024, ls / ln / 1024, ln
		growth = lmax / fmax - 1
		printf "  growth of the largest, first to last minute: %+.1f%%\n", growth * 100
		bad = 0
		if (lmax / 1024 > max_mb) { printf "soak: FAIL: the last minute reached %.1f MB, over %d MB\n", lmax / 1024, max_mb; bad = 1 }
		if (end >= 120 && growth > 0.10) { printf "soak: FAIL: memory grew by %.1f%% from the first minute to the last\n", growth * 100; bad = 1 }
		exit bad
	}' "$tmp/rss" || rc=1
printf "\nsamples (seconds, MB):"
awk '{ printf "%s%d:%.0f", (NR % 12 == 1 ? "\n  " : "  "), $1, $2 / 1024 }' "$tmp/rss"
echo
exit "$rc"
