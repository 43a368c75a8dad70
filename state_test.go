package feedkit_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// Open warns, once, when recoveries are on and the producer records live in memory only:
// a restart would recover the last AssumedDowntime only, and nothing else says so. A
// store that persists, or recoveries turned off (by the config or the environment),
// leave the log without it.
func TestOpenWarnsWhenRecordsAreNotPersisted(t *testing.T) {
	file := recovery.NewFileStore(filepath.Join(t.TempDir(), "producers.json"))
	cases := []struct {
		name     string
		env      string
		cfg      recovery.Config
		downtime time.Duration // in the warning; 0: no warning
	}{
		{"default store", "", recovery.Config{}, recovery.DefaultAssumedDowntime},
		{"memory store", "", recovery.Config{Store: recovery.NewMemoryStore()}, recovery.DefaultAssumedDowntime},
		{"assumed downtime set", "", recovery.Config{AssumedDowntime: 2 * time.Hour}, 2 * time.Hour},
		{"file store", "", recovery.Config{Store: file}, 0},
		{"recoveries disabled", "", recovery.Config{Disabled: true}, 0},
		{"recoveries disabled by the environment", "false", recovery.Config{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(feedkit.RecoveryEnabledEnv, c.env)
			broker := feedtest.NewBroker(feedtest.BrokerOptions{})
			t.Cleanup(broker.Close)
			logs := &warnings{}
			rc := c.cfg
			rc.Producers = []feed.Producer{mustProducer(t, 1)}
			sdk, err := feedkit.New(feedkit.Config{Transport: broker, Logger: slog.New(logs),
				API:      feedapi.Config{BaseURL: "http://127.0.0.1:1", AccessToken: feedtest.DefaultAccessToken},
				Recovery: rc})
			require.NoError(t, err)
			require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
			assert.Empty(t, logs.about("in memory only"), "New does not warn: Open does")
			require.NoError(t, sdk.Open(t.Context()))
			require.NoError(t, sdk.Close(context.Background()))
			got := logs.about("in memory only")
			if c.downtime == 0 {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Contains(t, got[0], "recovery: producer records are kept in memory only (Config.Store)")
			assert.Contains(t, got[0], "assumed_downtime="+c.downtime.String())
		})
	}
}

func mustProducer(t *testing.T, id int) feed.Producer {
	t.Helper()
	p, ok := feed.LookupProducer(feed.DefaultProducers(), id)
	require.True(t, ok)
	return p
}

// warnings is a slog.Handler that keeps the warnings (and worse) it is given, each as
// its message and attributes on one line.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, line)
	return nil
}

func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

// about returns the warnings that contain s.
func (w *warnings) about(s string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
