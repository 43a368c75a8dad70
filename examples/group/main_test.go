package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// build builds the program into a directory of the test's, under the race detector when
// the tests run under it: -role all starts its children from its own executable.
func build(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "group")
	args := []string{"build", "-o", exe}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	return exe
}

// runAllProcesses runs the built program with -role all and args on a virtual host of
// the test's own, and returns its output once it exited, and its exit status.
func runAllProcesses(t *testing.T, args ...string) (string, int) {
	t.Helper()
	url := testenv.AMQPVhost(t)
	exe := build(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append([]string{"-amqp", url, "-duration", "9s", "-rate", "500", "-matches", "20",
		"-outage", "4s", "-progress", "500ms"}, args...)...)
	cmd.Env = os.Environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "running %s:\n%s", exe, out.String())
		code = exit.ExitCode()
	}
	return out.String(), code
}

// lastLine returns text's last line.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return lines[len(lines)-1]
}

// assertStory checks the output of -role all: the children's lines under their names,
// the outage and its recovery on every worker, each worker's summary, and the verdict.
func assertStory(t *testing.T, text string, code int) {
	t.Helper()
	assert.Equal(t, 0, code, "the exit status of a run whose verdict is OK:\n%s", text)
	assert.True(t, strings.HasPrefix(lastLine(text), "OK: 2 workers processed "), "the last line is the verdict OK:\n%s", text)
	assert.Regexp(t, `(?m)^feed +\| api http://127\.0\.0\.1:\d+$`, text)
	assert.Regexp(t, `(?m)^feed +\| outage over`, text)
	assert.Regexp(t, `(?m)^feed +\| total: sent \d+ live event messages`, text)
	for _, w := range []string{"worker-0,1", "worker-2,3"} {
		assert.Regexp(t, `(?m)^`+w+` +\| worker: shards \d,\d of 4`, text)
		// The producer's story on each worker: up after the first recovery, down in the
		// outage, up again after its recovery.
		assert.Regexp(t, `(?s)\n`+w+` +\| producer 1 up \(\w+\).*\n`+w+` +\| producer 1 down \(AliveIntervalViolation\)`+
			`.*\n`+w+` +\| producer 1 up \(ReturnedFromInactivity\)`, text)
		assert.Regexp(t, `(?m)^`+w+` +\| summary \{"role":"worker","shards":\[\d,\d\],"processed":\d+,`, text)
	}
	// The workers together processed at least what the feed sent live.
	sent := figure(t, text, `total: sent (\d+) live event messages`)
	processed := figure(t, text, `\n  workers +processed (\d+): `)
	assert.GreaterOrEqual(t, processed, sent, text)
	assert.Contains(t, lastLine(text), " for the "+strconv.Itoa(sent)+" live event messages the feed sent")
}

func figure(t *testing.T, text, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	require.Len(t, m, 2, "no %q in:\n%s", pattern, text)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// -role all on RabbitMQ, the recovery point in memory: the feed, one ingress and two
// workers as processes, through an outage.
func TestAllRunsTheGroupAsProcesses(t *testing.T) {
	t.Parallel()
	text, code := runAllProcesses(t, "-pg=")
	assertStory(t, text, code)
	assert.Contains(t, text, "1 ingress,")
	assert.NotContains(t, text, "fail-over")
}

// With PostgreSQL, two ingresses share a lease and the recovery point: two thirds in,
// the active one is stopped, the standby takes over and resumes from the saved point,
// and every worker sees the producer up again.
func TestAllFailsOverToTheStandbyIngress(t *testing.T) {
	t.Parallel()
	pg := pgtest.URL(t)
	text, code := runAllProcesses(t, "-pg", pg)
	assertStory(t, text, code)
	assert.Contains(t, text, "2 ingresses (an active one and a standby)")
	m := regexp.MustCompile(`(?m)^all +\| fail-over: stopping the active ingress, (ingress-[ab]);`).FindStringSubmatch(text)
	require.Len(t, m, 2, "a fail-over:\n%s", text)
	standby := map[string]string{"ingress-a": "ingress-b", "ingress-b": "ingress-a"}[m[1]]
	assert.Regexp(t, `(?s)fail-over: stopping the active ingress.*\n`+m[1]+` +\| passive: epoch \d+ over.*\n`+standby+` +\| active, epoch \d+`, text)
	for _, w := range []string{"worker-0,1", "worker-2,3"} {
		assert.Regexp(t, `(?s)fail-over: stopping the active ingress.*\n`+w+` +\| producer 1 up \(`, text, "%s saw the producer up after the fail-over", w)
	}
	assert.Contains(t, lastLine(text), "the outage's and the fail-over's")
}

// syncBuffer is a bytes.Buffer for a writer and a reader on other goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// The listener a worker is given runs as it is in one process: -role single, the plain
// SDK on the feed, counts the feed's messages with it and sees the producer up.
func TestSingleRunsTheSameListener(t *testing.T) {
	t.Parallel()
	url := testenv.AMQPVhost(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	var feedOut syncBuffer
	feedDone := make(chan error, 1)
	go func() {
		feedDone <- run(feedCtx, []string{"-role", "feed", "-amqp", url, "-listen", "127.0.0.1:0", "-rate", "500", "-outage", "0", "-progress", "500ms"}, &feedOut)
	}()
	api := regexp.MustCompile(`(?m)^api (\S+)$`)
	require.Eventually(t, func() bool { return api.MatchString(feedOut.String()) }, time.Minute, 10*time.Millisecond, "the feed's API:\n%s", feedOut.String())

	singleCtx, stopSingle := context.WithCancel(ctx)
	defer stopSingle()
	var out syncBuffer
	singleDone := make(chan error, 1)
	go func() {
		singleDone <- run(singleCtx, []string{"-role", "single", "-amqp", url, "-api", api.FindStringSubmatch(feedOut.String())[1],
			"-pg=", "-progress", "200ms"}, &out)
	}()
	processed := regexp.MustCompile(`(?m)^processed ([1-9]\d*) `)
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "producer 1 up (FirstRecoveryCompleted)") && processed.MatchString(out.String())
	}, time.Minute, 10*time.Millisecond, "the single process's progress:\n%s", out.String())
	stopSingle()
	require.NoError(t, <-singleDone, out.String())
	stopFeed()
	require.NoError(t, <-feedDone, feedOut.String())
	assert.Regexp(t, `(?m)^summary \{"role":"single","processed":[1-9]\d*,"replayed":\d+,"by_type":\{.*"odds_change":[1-9]\d*.*\},"ups":[1-9]\d*,"downs":[1-9]\d*\}$`, out.String())
}

// A bad flag fails the run, exit status 1, with a message naming it; nothing starts.
func TestBadFlagsAreNamed(t *testing.T) {
	t.Setenv("FEEDKIT_AMQP_URL", "amqp://guest:guest@127.0.0.1:1/")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-role", "nope"}, `-role "nope": want all, feed, ingress, worker or single`},
		{[]string{"-shards", "x"}, `-shards "x": want the number of shard queues, 1 to 256`},
		{[]string{"-role", "ingress", "-shards", "0"}, `-shards "0"`},
		{[]string{"-role", "worker", "-shards", "0,4"}, `-shards "0,4": shard 4 is not from 0 to 3`},
		{[]string{"-role", "worker", "-shards", "1,1"}, `-shards "1,1": shard 1 is listed twice`},
		{[]string{"-role", "worker", "-shards", "a"}, `-shards "a": want shard numbers`},
		{[]string{"-role", "worker", "-of", "0"}, `-of 0`},
		{[]string{"-workers", "5"}, `-workers 5 must be from 1 to -shards (4)`},
		{[]string{"-outage", "1s"}, `-outage 1s must be 0 or at least 4s`},
		{[]string{"-rate", "0"}, `-rate 0`},
		{[]string{"-threads", "0"}, `-threads 0`},
		{[]string{"-pg", "mysql://x"}, `-pg "mysql://x"`},
		{[]string{"-amqp", ""}, `-amqp is empty`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 1, command(tt.args, &out, &errOut), "%v", tt.args)
		assert.Contains(t, errOut.String(), "group: "+tt.want, "%v", tt.args)
		assert.Empty(t, out.String(), "%v: nothing started", tt.args)
	}
}

// The shards are split among -workers in runs, as even as can be, each shard to one.
func TestShardsOf(t *testing.T) {
	for _, tt := range []struct {
		k, workers int
		want       [][]int
	}{
		{4, 2, [][]int{{0, 1}, {2, 3}}},
		{4, 3, [][]int{{0}, {1}, {2, 3}}},
		{4, 4, [][]int{{0}, {1}, {2}, {3}}},
		{3, 1, [][]int{{0, 1, 2}}},
	} {
		o := options{k: tt.k, workers: tt.workers}
		var got [][]int
		for i := range tt.workers {
			got = append(got, shardsOf(o, i))
		}
		assert.Equal(t, tt.want, got, "%d shards, %d workers", tt.k, tt.workers)
	}
}
