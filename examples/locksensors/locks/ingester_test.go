package locks_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

func newIngester(t *testing.T, s locks.Store, clk clock.Clock) *locks.Ingester {
	t.Helper()
	in, err := locks.NewIngester(s, locks.IngesterConfig{Clock: clk})
	require.NoError(t, err)
	return in
}

func TestIngesterNotifiesChangesOnly(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"xa7v9Dfadr7H"}, "http://a.example/hook", "http://b.example/hook")
	clk := clocktest.NewFake(t0)
	in := newIngester(t, s, clk)
	ctx := t.Context()

	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("xa7v9Dfadr7H", 1, t0))))
	assert.Equal(t, []string{"changed 1 pending client1", "changed 1 pending client2"}, summary(notes(t, s, "xa7v9Dfadr7H")),
		"the first reading sets the state: every linked client is told")

	require.NoError(t, in.HandleBatch(ctx, msgs(t0.Add(time.Minute), reading("xa7v9Dfadr7H", 1, t0.Add(time.Minute)))))
	assert.Len(t, notes(t, s, "xa7v9Dfadr7H"), 2, "the same value again notifies nobody")

	require.NoError(t, in.HandleBatch(ctx, msgs(t0.Add(2*time.Minute), reading("xa7v9Dfadr7H", 0, t0.Add(2*time.Minute)))))
	assert.Equal(t, []string{
		"changed 1 cancelled client1", "changed 1 cancelled client2",
		"changed 0 pending client1", "changed 0 pending client2",
	}, summary(notes(t, s, "xa7v9Dfadr7H")), "a change supersedes the sensor's older pending notifications")

	cur, err := s.Current(ctx, "xa7v9Dfadr7H")
	require.NoError(t, err)
	assert.True(t, cur.Known)
	assert.Equal(t, locks.State(0), cur.State)
	assert.True(t, cur.ChangedAt.Equal(t0.Add(2*time.Minute)))
	rs, err := s.Readings(ctx, "xa7v9Dfadr7H", locks.Range{Limit: 10})
	require.NoError(t, err)
	var outcomes []locks.Outcome
	for _, r := range rs {
		outcomes = append(outcomes, r.Outcome)
	}
	assert.Equal(t, []locks.Outcome{locks.Changed, locks.Same, locks.Changed}, outcomes, "every reading is in the history")
	assert.Equal(t, locks.IngestStats{Batches: 3, Readings: 3, Changed: 2, Same: 1, Notifications: 4}, in.Stats())
}

func TestIngesterRefusesBadReadingsAndGoesOn(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"0xA"}, "http://a.example/hook")
	in := newIngester(t, s, clocktest.NewFake(t0))
	bad := map[string]string{
		`{"sensor_id":"0xA","data":1`:                           "body: not a JSON object",
		`{"sensor_id":"NoSuchSensor","data":1,"ts":1764000000}`: `sensor_id: "NoSuchSensor" is not a registered sensor`,
		`{"sensor_id":"bad-id!","data":1,"ts":1764000000}`:      `sensor_id: "bad-id!" has '-'`,
		`{"sensor_id":"0123456789aBcDeF0","data":1,"ts":1}`:     "sensor_id: \"0123456789aBcDeF0\" is longer than 16",
		`{"sensor_id":"0xA","data":2,"ts":1764000000}`:          "data: 2 is not 0 or 1",
		`{"sensor_id":"0xA","data":"1","ts":1764000000}`:        `data: "1" is not 0 or 1`,
		`{"sensor_id":"0xA","data":1}`:                          "ts: missing",
		`{"sensor_id":"0xA","data":1,"ts":1764000000000}`:       "ts: 1764000000000 is not Unix seconds",
		"\xff\xfe": "body: not a JSON object",
	}
	var batch []locks.Message
	for raw := range bad {
		batch = append(batch, locks.Message{Body: []byte(raw), Received: t0})
	}
	batch = append(batch, locks.Message{Body: []byte(`{"sensor_id":"0xA","data":1,"ts":1764000000.5}`), Received: t0})
	require.NoError(t, in.HandleBatch(t.Context(), batch))

	dls, err := s.DeadLetters(t.Context(), 0, 100)
	require.NoError(t, err)
	require.Len(t, dls, len(bad))
	for _, d := range dls {
		want, ok := bad[string(d.Raw)]
		require.True(t, ok, "dead letter %q keeps the raw bytes", d.Raw)
		assert.Contains(t, d.Reason, want)
		assert.True(t, d.Received.Equal(t0))
	}
	cur, err := s.Current(t.Context(), "0xA")
	require.NoError(t, err)
	assert.Equal(t, locks.State(1), cur.State, "the good reading of the batch is stored")
	assert.True(t, cur.ReadingAt.Equal(time.Unix(1764000000, 500_000_000)), "fractional Unix seconds: %v", cur.ReadingAt)
	st := in.Stats()
	assert.Equal(t, uint64(len(bad)), st.Rejected)
	assert.Equal(t, uint64(1), st.Changed)
}

func TestIngesterStaleReadingChangesNothing(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"TestSensor"}, "http://a.example/hook")
	in := newIngester(t, s, clocktest.NewFake(t0))
	ctx := t.Context()
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("TestSensor", 1, t0))))
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("TestSensor", 0, t0.Add(-time.Second)))))
	cur, err := s.Current(ctx, "TestSensor")
	require.NoError(t, err)
	assert.Equal(t, locks.State(1), cur.State, "an older reading arriving late does not turn the state back")
	assert.Len(t, notes(t, s, "TestSensor"), 1)
	assert.Equal(t, uint64(1), in.Stats().Stale)
}

func TestIngesterRedeliveryNotifiesOnce(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"a1", "a2"}, "http://a.example/hook")
	in := newIngester(t, s, clocktest.NewFake(t0))
	batch := msgs(t0, reading("a1", 1, t0), reading("a2", 0, t0), reading("a1", 0, t0.Add(time.Second)))
	require.NoError(t, in.HandleBatch(t.Context(), batch))
	require.NoError(t, in.HandleBatch(t.Context(), batch), "the broker redelivers the batch")
	assert.Equal(t, []string{"changed 0 pending client1"}, summary(notes(t, s, "a1")),
		"one notification per sensor and batch, with the state it ended in")
	assert.Equal(t, []string{"changed 0 pending client1"}, summary(notes(t, s, "a2")))
}

func TestIngesterRestoresLostSensor(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"s1"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	in := newIngester(t, s, clk)
	ctx := t.Context()
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("s1", 1, t0))))
	_, err := s.Update(ctx, []locks.SensorID{"s1"}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		c := cur["s1"]
		c.Lost = true
		return locks.Effects{States: []locks.Current{c}, Now: t0}, nil
	})
	require.NoError(t, err)
	later := t0.Add(2 * time.Hour)
	require.NoError(t, in.HandleBatch(ctx, msgs(later, reading("s1", 0, later))))
	assert.Equal(t, []string{"changed 1 cancelled client1", "changed 0 pending client1", "restored 0 pending client1"},
		summary(notes(t, s, "s1")), "the change does not cancel the restoration found with it")
	cur, err := s.Current(ctx, "s1")
	require.NoError(t, err)
	assert.False(t, cur.Lost)
	assert.Equal(t, uint64(1), in.Stats().Restored)
}

func TestIngestersRacingNotifyAChangeOnce(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"race"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	var wg sync.WaitGroup
	for i := range 8 {
		in := newIngester(t, s, clk)
		wg.Go(func() {
			for k := range 50 {
				// Everyone sends the same readings: each value change is one change.
				at := t0.Add(time.Duration(k) * time.Second)
				assert.NoError(t, in.HandleBatch(t.Context(), msgs(at, reading("race", k%2, at))))
			}
			_ = i
		})
	}
	wg.Wait()
	changed := 0
	rs, err := s.Readings(t.Context(), "race", locks.Range{Limit: 1000})
	require.NoError(t, err)
	for _, r := range rs {
		if r.Outcome == locks.Changed {
			changed++
		}
	}
	assert.Len(t, rs, 400)
	assert.LessOrEqual(t, changed, 50, "no change counted twice")
	assert.Len(t, notes(t, s, "race"), changed, "one notification per change")
}

func TestNewIngesterAndLivenessNeedAStore(t *testing.T) {
	_, err := locks.NewIngester(nil, locks.IngesterConfig{})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "NewIngester: store is nil"), err.Error())
	_, err = locks.NewLiveness(nil, locks.LivenessConfig{})
	assert.ErrorContains(t, err, "NewLiveness: store is nil")
}

func TestIngesterSameTSLaterReadingWins(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"s1"}, "http://a.example/hook")
	in := newIngester(t, s, clocktest.NewFake(t0))
	ctx := t.Context()
	// A door opened and closed within one second, ts in whole seconds.
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("s1", 1, t0))))
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("s1", 0, t0))))
	cur, err := s.Current(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, locks.State(0), cur.State, "closed, not left open until the next reading")
	assert.Equal(t, []string{"changed 1 cancelled client1", "changed 0 pending client1"}, summary(notes(t, s, "s1")))
}

// Each event carries the sensor's time of the reading it is about, to the microsecond:
// the reading that changed the state (not a later one of the batch that repeated it),
// the one that ended a silence; and the events of a sensor are numbered in the order
// they were recorded.
func TestIngesterDatesAndNumbersTheEvents(t *testing.T) {
	s := locks.NewMemoryStore(0)
	registry(t, s, []string{"s1"}, "http://a.example/hook")
	clk := clocktest.NewFake(t0)
	in := newIngester(t, s, clk)
	ctx := t.Context()
	ts := t0.Add(-time.Second + 123456*time.Microsecond)
	require.NoError(t, in.HandleBatch(ctx, msgs(t0, reading("s1", 1, ts), reading("s1", 1, ts.Add(time.Second)))))
	_, err := s.Update(ctx, []locks.SensorID{"s1"}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		c := cur["s1"]
		c.Lost = true
		return locks.Effects{States: []locks.Current{c}, Now: t0}, nil
	})
	require.NoError(t, err)
	back, flip := t0.Add(2*time.Hour+654321*time.Microsecond), t0.Add(2*time.Hour+time.Second)
	require.NoError(t, in.HandleBatch(ctx, msgs(t0.Add(2*time.Hour), reading("s1", 1, back), reading("s1", 0, flip))))

	type event struct {
		Event     locks.Event
		State     locks.State
		ReadingAt time.Time
		Sequence  int64
	}
	var got []event
	for _, n := range notes(t, s, "s1") {
		got = append(got, event{n.Event, n.State, n.ReadingAt, n.Sequence})
	}
	assert.ElementsMatch(t, []event{
		{locks.EventChanged, 1, ts, 1},
		{locks.EventChanged, 0, flip, 2},
		{locks.EventRestored, 0, back, 3},
	}, got)
	cur, err := s.Current(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, int64(3), cur.Sequence)
}
