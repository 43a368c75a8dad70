package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// t0 is when the tests' fake clocks start.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// harness runs a service, serving its API and /metrics as run does, and reports what
// it does: the batches it handled and the notification attempts it recorded.
type harness struct {
	t        *testing.T
	svc      *service
	url      string   // where the service serves its API and /metrics
	batches  chan int // messages per handled batch
	handledN int      // batches handled(), counted
	finishes chan locks.Result
	stop     func()
}

// startService starts a service made of cfg; cfg.wrapStore, if set, wraps the store
// inside the harness's own watch.
func startService(t *testing.T, cfg serviceConfig) *harness {
	t.Helper()
	h := &harness{t: t, batches: make(chan int, 10000), finishes: make(chan locks.Result, 10000)}
	if cfg.logger == nil {
		cfg.logger = testLogger(t)
	}
	wrap := cfg.wrapStore
	cfg.wrapStore = func(s locks.Store) locks.Store {
		if wrap != nil {
			s = wrap(s)
		}
		return finishWatch{Store: s, done: h.finishes}
	}
	cfg.afterBatch = func(msgs []locks.Message, err error) {
		if err == nil {
			h.batches <- len(msgs)
		}
	}
	svc, err := newService(t.Context(), cfg)
	require.NoError(t, err)
	h.svc = svc
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h.url = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- svc.run(ctx, ln) }()
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-done)
		svc.close()
	}
	t.Cleanup(h.stop)
	select {
	case <-svc.ready():
	case err := <-done:
		t.Fatalf("the service stopped before it was ready: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the service was not consuming within 30s")
	}
	return h
}

// testLogger returns a logger whose records the test prints if it fails: what the
// service said of the store, the broker and its retries is what explains a wait that
// timed out.
func testLogger(t *testing.T) *slog.Logger {
	var (
		mu  sync.Mutex
		buf bytes.Buffer
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() && buf.Len() > 0 {
			t.Logf("the service's log:\n%s", buf.Bytes())
		}
	})
	return slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// finishWatch reports every recorded attempt.
type finishWatch struct {
	locks.Store
	done chan<- locks.Result
}

func (f finishWatch) Finish(ctx context.Context, r locks.Result) error {
	err := f.Store.Finish(ctx, r)
	if err == nil {
		f.done <- r
	}
	return err
}

// handled waits until the service has handled n more messages.
func (h *harness) handled(n int) {
	h.t.Helper()
	for n > 0 {
		select {
		case k := <-h.batches:
			n -= k
			h.handledN++
		case <-time.After(30 * time.Second):
			h.t.Fatalf("%d messages not handled within 30s", n)
		}
	}
}

// attempts waits for the next n recorded attempts and returns how many ended in each
// status.
func (h *harness) attempts(n int) map[locks.Status]int {
	h.t.Helper()
	got := map[locks.Status]int{}
	for range n {
		select {
		case r := <-h.finishes:
			got[r.Status]++
		case <-time.After(30 * time.Second):
			h.t.Fatalf("only %v of %d attempts recorded within 30s", got, n)
		}
	}
	return got
}

// call makes an API request and decodes the answer into out (when not nil), requiring
// the status want.
func (h *harness) call(method, path string, body any, want int, out any) {
	h.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(h.t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.url+path, r)
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(h.t, want, resp.StatusCode, "%s %s: %s", method, path, b)
	if out != nil {
		require.NoError(h.t, json.Unmarshal(b, out), "%s", b)
	}
}

// endpoint is a client's endpoint that refuses its first failFirst requests, and can be
// made to hang.
type endpoint struct {
	*httptest.Server
	mu        sync.Mutex
	failFirst int
	calls     int
	got       []locks.Body
	keys      map[string]int
}

func newEndpoint(t *testing.T, failFirst int) *endpoint {
	w := &endpoint{failFirst: failFirst, keys: map[string]int{}}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var b locks.Body
		err := json.NewDecoder(r.Body).Decode(&b)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls++
		if err != nil {
			t.Errorf("a notification that is not JSON: %v", err)
		}
		if w.calls <= w.failFirst {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.keys[r.Header.Get(locks.IdempotencyKeyHeader)]++
		w.got = append(w.got, b)
	}))
	t.Cleanup(w.Close)
	return w
}

// received returns "event state #sequence" of every notification accepted, by sensor,
// and the idempotency keys seen more than once.
func (w *endpoint) received() (map[locks.SensorID][]string, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	by := map[locks.SensorID][]string{}
	for _, b := range w.got {
		by[b.SensorID] = append(by[b.SensorID], fmt.Sprintf("%s %d #%d", b.Event, b.State, b.Sequence))
	}
	var dup []string
	for k, n := range w.keys {
		if n > 1 {
			dup = append(dup, k)
		}
	}
	return by, dup
}

// reading returns the message of a reading.
func reading(id string, data int, ts time.Time) []byte {
	return fmt.Appendf(nil, `{"sensor_id":%q,"data":%d,"ts":%d}`, id, data, ts.Unix())
}

// idle is how many timers a service waits on when it has nothing to do: the notifier's
// next look, the liveness monitor's tick and its resync ticker.
const idle = 3

// advance moves clk by d once the service is idle (its timers set for what they wait
// for), then has the sensors silent by then found and their losses recorded: the
// liveness monitor, woken by the clock on its way, may read the time before the clock
// has got there and wait for a later tick, which the test never reaches.
func (h *harness) advance(clk *clocktest.Fake, d time.Duration) {
	h.t.Helper()
	clk.BlockUntil(idle)
	clk.Advance(d)
	ctx, cancel := context.WithTimeout(h.t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(h.t, h.svc.liveness.Flush(ctx), "the losses due by %v not recorded within 30s", clk.Now())
}

var _ = assert.Equal
