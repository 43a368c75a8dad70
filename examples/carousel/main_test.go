package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
)

// published returns how many publications the summary says the notifier received.
func published(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`The local notifier received (\d+) items? \((\d+) distinct\) and refused 0 requests\.`).FindStringSubmatch(out)
	require.NotNil(t, m, "no notifier line in:\n%s", out)
	n, _ := strconv.Atoi(m[1])
	return n
}

// total adds up what every cycle republished.
func total(republished map[string]int) int {
	n := 0
	for _, k := range republished {
		n += k
	}
	return n
}

// guard bounds a run that an until ends: it is reached only if the run hangs.
const guard = time.Minute

func TestRunInMemory(t *testing.T) {
	var out, logs bytes.Buffer
	// The run ends once each of the three cycles has republished and ten items have gone
	// out in all, however long that takes the machine.
	var met atomic.Bool
	o := options{addr: "127.0.0.1:0", editEvery: 50 * time.Millisecond,
		metadata: filepath.Join(t.TempDir(), "metadata.json"),
		until: func(republished map[string]int) bool {
			if len(republished) < 3 || total(republished) < 10 {
				return false
			}
			met.Store(true)
			return true
		}}
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	require.NoError(t, run(ctx, o, &out, &logs), "logs:\n%s", logs.String())
	require.True(t, met.Load(), "the run ended before every cycle republished:\n%s", out.String())
	assert.Contains(t, out.String(), "\nThe run is over: the cycles stopped and saved their progress.\n")
	for _, c := range []string{"articles-whole", "articles-last-hour", "videos-scaling"} {
		assert.Regexp(t, c+`\s+\w+\s+[1-9]\d*\s+[1-9]\d*/\d+\s+0\s+\S+\s+ok\n`, out.String(), "every cycle republished without errors")
	}
	assert.GreaterOrEqual(t, published(t, out.String()), 10, "the notifier received what the cycles republished")
	assert.Contains(t, out.String(), "  0 items received again in the same iteration", "one run republishes no item twice in an iteration")
	assert.Regexp(t, `\nOK: [1-9]\d* items republished to the local notifier, which accepted every one\n$`, out.String(), "the last line is the verdict")
	assert.NotRegexp(t, `false|error|FAILED|\[stopped\]`, out.String(), "nothing in a healthy run reads like a failure")

	// A second run resumes where the first stopped.
	b, err := os.ReadFile(o.metadata)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"articles-whole"`)
}

// cancelOn is a run's output that cancels the run's context once a line matches: the
// run ends when it has printed what the test waits for.
type cancelOn struct {
	mu     sync.Mutex
	b      bytes.Buffer
	match  *regexp.Regexp
	cancel context.CancelFunc
	seen   bool
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.b.Write(p)
	if !c.seen && c.match.Match(c.b.Bytes()) {
		c.seen = true
		c.cancel()
	}
	return n, err
}

// matched reports whether a line matched.
func (c *cancelOn) matched() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

func (c *cancelOn) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// Without -v a run still says what it is doing: a progress line every -progress with
// what each cycle has republished. The run ends once such a line counts something.
func TestRunShowsProgressWithoutVerbose(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	out := &cancelOn{cancel: cancel,
		match: regexp.MustCompile(`(?m)^after \S+: [1-9]\d* items? republished so far \(articles-last-hour \d+, articles-whole \d+, videos-scaling \d+\)$`)}
	var logs bytes.Buffer
	o := options{addr: "127.0.0.1:0", editEvery: 50 * time.Millisecond, progress: 20 * time.Millisecond,
		metadata: filepath.Join(t.TempDir(), "metadata.json")}
	require.NoError(t, run(ctx, o, out, &logs), "logs:\n%s", logs.String())
	require.True(t, out.matched(), "no progress line counted a republished item:\n%s", out.String())
	assert.Empty(t, logs.String(), "nothing logged without -v in a healthy run")
	for _, line := range strings.Split(out.String(), "\n") {
		if elapsed, ok := strings.CutPrefix(line, "after "); ok {
			elapsed, _, _ = strings.Cut(elapsed, ":")
			d, err := time.ParseDuration(elapsed)
			require.NoError(t, err, line)
			assert.Equal(t, d.Round(time.Millisecond), d, "the elapsed time is rounded for people: %s", line)
		}
	}
}

// A duration is printed as a person reads it, not to the nanosecond.
func TestForPeople(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234567891 * time.Nanosecond:  "1.2s",
		47368421052 * time.Nanosecond: "47.4s",
		64285714285 * time.Nanosecond: "1m4s",
		50 * time.Millisecond:         "50ms",
		2000312 * time.Microsecond:    "2s",
		1500 * time.Microsecond:       "2ms",
	} {
		assert.Equal(t, want, forPeople(d).String(), "%v", d)
	}
}

func TestRunRefusesABadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cycles.yml")
	require.NoError(t, os.WriteFile(path, []byte("cycles:\n  - name: x\n    type: FixedWindow\n"), 0o600))
	var out bytes.Buffer
	err := run(context.Background(), options{addr: "127.0.0.1:0", config: path, duration: time.Second}, &out, &out)
	assert.ErrorContains(t, err, "cycles[0].origin is required")
	assert.ErrorContains(t, err, "cycles[0].timeWindow is required")
	assert.Empty(t, out.String(), "nothing started")
}

// announcer is a run's output that closes started once the run has printed that it
// serves its API: everything is assembled, and the run goes on until its context ends.
type announcer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	started chan struct{}
	once    sync.Once
}

func (a *announcer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.b.Write(p)
	if strings.Contains(a.b.String(), "operator API and status page:") {
		a.once.Do(func() { close(a.started) })
	}
	return n, err
}

func (a *announcer) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.b.String()
}

// Two instances on one database: exactly one is active and republishes. Both run until
// the active one has republished ten items, and both have started by then.
func TestRunTwoInstancesOnPostgreSQL(t *testing.T) {
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	outs := []*announcer{{started: make(chan struct{})}, {started: make(chan struct{})}}
	var met atomic.Bool
	until := func(republished map[string]int) bool {
		if total(republished) < 10 {
			return false
		}
		for _, o := range outs { // stopped while assembling, the other would fail to start
			select {
			case <-o.started:
			case <-ctx.Done():
				return true
			}
		}
		met.Store(true)
		cancel()
		return true
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			var logs bytes.Buffer
			errs[i] = run(ctx, options{addr: "127.0.0.1:0", pgURL: url, editEvery: 50 * time.Millisecond, until: until}, outs[i], &logs)
		})
	}
	wg.Wait()
	require.True(t, met.Load(), "no instance republished ten items:\n%s\n%s", outs[0].String(), outs[1].String())
	active := 0
	for i := range 2 {
		require.NoError(t, errs[i], "instance %d:\n%s", i, outs[i].String())
		if published(t, outs[i].String()) > 0 {
			active++
			assert.Regexp(t, `this instance held the lease \(generation [1-9]\d*\)`, outs[i].String())
			assert.Regexp(t, `\nOK: [1-9]\d* items? republished to the local notifier, which accepted every one\n$`, outs[i].String())
		} else {
			assert.Contains(t, outs[i].String(), "this instance was passive at the end (another instance holds the lease)")
			assert.True(t, strings.HasSuffix(outs[i].String(), "\nOK: this instance stayed passive while another held the lease, so it republished nothing\n"),
				"a passive instance is healthy, and says so last:\n%s", outs[i].String())
		}
	}
	assert.Equal(t, 1, active, "exactly one instance republished:\n%s\n%s", outs[0].String(), outs[1].String())
}
