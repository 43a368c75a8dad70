package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgtest"
)

// published returns how many publications the summary says the notifier received.
func published(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`notifier: (\d+) publications of (\d+) distinct items, 0 refused`).FindStringSubmatch(out)
	require.NotNil(t, m, "no notifier line in:\n%s", out)
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestRunInMemory(t *testing.T) {
	var out, logs bytes.Buffer
	o := options{addr: "127.0.0.1:0", duration: time.Second, editEvery: 50 * time.Millisecond,
		metadata: filepath.Join(t.TempDir(), "metadata.json")}
	require.NoError(t, run(context.Background(), o, &out, &logs), "logs:\n%s", logs.String())
	assert.Contains(t, out.String(), "scheduler: started=false active=true")
	for _, c := range []string{"articles-whole", "articles-last-hour", "videos-scaling"} {
		assert.Regexp(t, c+`\s+\w+\s+[1-9]\d*\s+[1-9]\d*/\d+\s+0\s`, out.String(), "every cycle republished without errors")
	}
	// The whole collection goes at one per 50 ms: about 20 in a second.
	assert.GreaterOrEqual(t, published(t, out.String()), 10)

	// A second run resumes where the first stopped.
	b, err := os.ReadFile(o.metadata)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"articles-whole"`)
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

// Two instances on one database: exactly one is active and republishes.
func TestRunTwoInstancesOnPostgreSQL(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var logs bytes.Buffer
			errs[i] = run(context.Background(), options{addr: "127.0.0.1:0", pgURL: url, duration: 2 * time.Second, editEvery: 50 * time.Millisecond}, &outs[i], &logs)
		}()
	}
	wg.Wait()
	active := 0
	for i := range 2 {
		require.NoError(t, errs[i], "instance %d:\n%s", i, outs[i].String())
		if published(t, outs[i].String()) > 0 {
			active++
			assert.Contains(t, outs[i].String(), "active=true")
		} else {
			assert.Contains(t, outs[i].String(), "active=false")
		}
	}
	assert.Equal(t, 1, active, "exactly one instance republished:\n%s\n%s", outs[0].String(), outs[1].String())
}
