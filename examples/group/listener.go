package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// counter is the application's listener: it counts the messages it receives by type,
// those of a recovery's replay apart, and takes -work over each, as a listener that
// writes to a database would. Nothing in it knows whether it runs in one process
// (feedkit.SDK.AddSession) or in a group's worker (group.WorkerConfig.Listener).
type counter struct {
	work time.Duration

	total, replayed atomic.Uint64

	mu     sync.Mutex
	byType map[string]uint64
}

var _ feed.CashoutListener = (*counter)(nil)

func newCounter(work time.Duration) *counter {
	return &counter{work: work, byType: map[string]uint64{}}
}

func (c *counter) count(typ string, requestID int64) error {
	if c.work > 0 {
		time.Sleep(c.work)
	}
	c.mu.Lock()
	c.byType[typ]++
	c.mu.Unlock()
	if requestID != 0 {
		c.replayed.Add(1)
	}
	c.total.Add(1)
	return nil
}

func (c *counter) message(m feed.Message) error {
	return c.count(m.Type().String(), m.MessageHeader().RequestID)
}

func (c *counter) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return c.message(m) }
func (c *counter) OnBetStop(_ context.Context, m *feed.BetStop) error       { return c.message(m) }
func (c *counter) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return c.message(m)
}
func (c *counter) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return c.message(m)
}
func (c *counter) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return c.message(m) }
func (c *counter) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return c.message(m)
}
func (c *counter) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error {
	return c.message(m)
}
func (c *counter) OnCashout(_ context.Context, m *feed.Cashout) error { return c.message(m) }
func (c *counter) OnUnparsableMessage(context.Context, *feed.UnparsableMessage) error {
	return c.count("unparsable", 0)
}

func (c *counter) types() map[string]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byType)
}

// statuses is the application's global events listener: it prints the producers' ups
// and downs and the recoveries, and counts them.
type statuses struct {
	feed.BaseGlobalEventsListener
	out *printer

	mu         sync.Mutex
	ups, downs int
	up         bool // the last status told
}

func (s *statuses) OnProducerStatusChange(_ context.Context, st feed.ProducerStatus) {
	s.mu.Lock()
	s.up = !st.Down
	if st.Down {
		s.downs++
	} else {
		s.ups++
	}
	s.mu.Unlock()
	s.out.printf("%s", statusLine(st))
}

func (s *statuses) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated) {
	if r.Kind == feed.ProducerRecovery {
		s.out.printf("recovery #%d requested for producer %d, from %s", r.RequestID, r.Producer, r.After.UTC().Format("15:04:05.000"))
	}
}

// statusLine says a producer's status as the workers print it, and -role all reads it.
func statusLine(st feed.ProducerStatus) string {
	if st.Down {
		return fmt.Sprintf("producer %d down (%s)", st.Producer, st.Reason)
	}
	return fmt.Sprintf("producer %d up (%s)", st.Producer, st.Reason)
}

func (s *statuses) counts() (ups, downs int, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ups, s.downs, s.up
}

// summary is what a worker (or -role single) prints as it ends, in one JSON line after
// summaryPrefix: what its listeners were given.
type summary struct {
	Role      string            `json:"role"`
	Shards    []int             `json:"shards,omitempty"`
	Processed uint64            `json:"processed"` // listener calls, replayed ones included
	Replayed  uint64            `json:"replayed"`  // of which a recovery's replay
	ByType    map[string]uint64 `json:"by_type"`
	Ups       int               `json:"ups"`   // producer ups told to the global listener
	Downs     int               `json:"downs"` // and downs
}

const summaryPrefix = "summary "

func makeSummary(role string, shards []int, c *counter, s *statuses) summary {
	ups, downs, _ := s.counts()
	return summary{Role: role, Shards: shards, Processed: c.total.Load(), Replayed: c.replayed.Load(),
		ByType: c.types(), Ups: ups, Downs: downs}
}

func (s summary) print(out *printer) {
	b, _ := json.Marshal(s) // a struct of plain fields: no error
	out.printf("%s%s", summaryPrefix, b)
}

// byTypeLine lists counts by type, the largest first.
func byTypeLine(m map[string]uint64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// progressLine is the line a worker or -role single prints every -progress: -role all
// reads the count after processedPrefix.
func progressLine(c *counter, last *uint64, every time.Duration, tail string) string {
	n := c.total.Load()
	line := fmt.Sprintf("%s%d (%.0f/s), %d replayed", processedPrefix, n, float64(n-*last)/every.Seconds(), c.replayed.Load())
	*last = n
	if tail != "" {
		line += "; " + tail
	}
	return line
}

const processedPrefix = "processed "

// printer writes whole lines, from any goroutine.
type printer struct {
	mu  sync.Mutex
	out io.Writer
}

func newPrinter(w io.Writer) *printer { return &printer{out: w} }

func (p *printer) printf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.out, line)
}
