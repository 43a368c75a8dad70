package carouselhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouselhttp"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/internal/jsonapi"
	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

// apiEpoch is where the fake clock of every API test starts.
var apiEpoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// apiBound is how long a test waits in real time for a cycle's goroutine to reach a point
// it is bound to reach: a guard against a hang, not a delay anything relies on.
const apiBound = time.Minute

// apiBrokenCollection is a collection whose source always fails: its cycle turns unhealthy.
const apiBrokenCollection = "broken"

// The cycles of apiFixture.threeCycles.
var (
	alphaConfig = carousel.CycleConfig{Name: "alpha", Type: carousel.ThrottledWholeCollection,
		Origin: "methode-web-pub", Collection: "articles", CoolDown: 5 * time.Minute, Throttle: 30 * time.Second}
	betaConfig = carousel.CycleConfig{Name: "beta", Type: carousel.ThrottledWholeCollection,
		Origin: "video-pub", Collection: "videos", CoolDown: 5 * time.Minute, Throttle: time.Minute}
	gammaConfig = carousel.CycleConfig{Name: "gamma", Type: carousel.FixedWindow,
		Origin: "wordpress", Collection: apiBrokenCollection, CoolDown: 5 * time.Minute,
		TimeWindow: time.Hour, MinimumThrottle: time.Minute}
)

// apiFixture is a Scheduler on a fake clock behind NewHandler. Its publisher hangs until
// the cycle stops, so a running cycle stays at a known item with known progress.
type apiFixture struct {
	t     *testing.T
	clk   *clocktest.Fake
	src   *carousel.MemorySource
	store *carousel.MemoryStore
	s     *carousel.Scheduler
	h     http.Handler
	pubs  chan carousel.Publication // each publish, as it begins
}

func newAPIFixture(t *testing.T, mod func(*carousel.Config)) *apiFixture {
	t.Helper()
	f := &apiFixture{t: t, clk: clocktest.NewFake(apiEpoch), src: carousel.NewMemorySource(),
		store: carousel.NewMemoryStore(), pubs: make(chan carousel.Publication, 100)}
	pub := carousel.PublisherFunc(func(ctx context.Context, p carousel.Publication) error {
		f.pubs <- p
		<-ctx.Done()
		return ctx.Err()
	})
	cfg := carousel.Config{
		Store: f.store, Clock: f.clk,
		// Real time: the hanging publish must outlast the test.
		PublishTimeout: time.Hour,
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := carousel.NewScheduler(apiFailingSource{f.src}, pub, cfg)
	require.NoError(t, err)
	f.s = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), apiBound)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx), "Shutdown")
	})
	f.h = carouselhttp.NewHandler(s, carouselhttp.HandlerOptions{Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	return f
}

// apiFailingSource fails for apiBrokenCollection and lists the others from its Source.
type apiFailingSource struct{ carousel.Source }

var errSourceDown = errors.New("source down")

func (s apiFailingSource) Count(ctx context.Context, q carousel.Query) (int, error) {
	if q.Collection == apiBrokenCollection {
		return 0, errSourceDown
	}
	return s.Source.Count(ctx, q)
}

func (s apiFailingSource) List(ctx context.Context, q carousel.Query, after carousel.Item, limit int) ([]carousel.Item, error) {
	if q.Collection == apiBrokenCollection {
		return nil, errSourceDown
	}
	return s.Source.List(ctx, q, after, limit)
}

// put fills collection with n items, "<collection>-01" on.
func (f *apiFixture) put(collection string, n int) {
	f.t.Helper()
	for i := 1; i <= n; i++ {
		require.NoError(f.t, f.src.Put(collection, carousel.Item{ID: fmt.Sprintf("%s-%02d", collection, i)}))
	}
}

// saveProgress stores metadata for cfg's cycle as if an earlier run had completed
// completed of total items of its iteration; the cycle resumes from it when it starts.
func (f *apiFixture) saveProgress(cfg carousel.CycleConfig, iteration, completed, total, errs int) {
	f.t.Helper()
	m := carousel.CycleMetadata{CycleID: cfg.Name, Config: cfg, Iteration: iteration, Total: total,
		Completed: completed, Errors: errs, Last: carousel.Item{ID: fmt.Sprintf("%s-%02d", cfg.Collection, completed)},
		IterationStart: apiEpoch.Add(-time.Hour), InProgress: true, States: []carousel.State{carousel.Running}}
	if errs > 0 {
		m.LastError = "publish: 502 Bad Gateway"
	}
	if cfg.Type.Windowed() {
		m.WindowStart, m.WindowEnd = apiEpoch.Add(-time.Hour-cfg.TimeWindow), apiEpoch.Add(-time.Hour)
	}
	require.NoError(f.t, f.store.Save(context.Background(), m, 0))
}

func (f *apiFixture) add(cfgs ...carousel.CycleConfig) {
	f.t.Helper()
	for _, c := range cfgs {
		require.NoError(f.t, f.s.Add(context.Background(), c))
	}
}

func (f *apiFixture) start() {
	f.t.Helper()
	require.NoError(f.t, f.s.Start(context.Background()))
}

// awaitPublishes returns the next n publishes to begin, by item id.
func (f *apiFixture) awaitPublishes(n int) map[string]string {
	f.t.Helper()
	got := make(map[string]string)
	for range n {
		select {
		case p := <-f.pubs:
			got[p.Item.ID] = p.Cycle
		case <-time.After(apiBound):
			f.t.Fatalf("after publishes %v, no other began within %v", got, apiBound)
		}
	}
	return got
}

// awaitWaits returns once n goroutines wait on the fake clock.
func (f *apiFixture) awaitWaits(n int) {
	f.t.Helper()
	done := make(chan struct{})
	go func() {
		f.clk.BlockUntil(n)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(apiBound):
		f.t.Fatalf("%d waits on the clock did not begin within %v (pending: %d)", n, apiBound, f.clk.Pending())
	}
}

// threeCycles starts the scheduler with three cycles, each with progress it restored:
//
//	alpha  running, iteration 2, 3 of 10 completed (1 failed), publishing articles-04
//	beta   stopped by hand, iteration 1, 7 of 20
//	gamma  FixedWindow, unhealthy (its source fails), resuming 2 of 5
func (f *apiFixture) threeCycles() {
	f.t.Helper()
	f.put("articles", 10)
	f.put("videos", 20)
	f.saveProgress(alphaConfig, 2, 3, 10, 1)
	f.saveProgress(betaConfig, 1, 7, 20, 0)
	f.saveProgress(gammaConfig, 1, 2, 5, 0)
	f.add(alphaConfig, betaConfig, gammaConfig)
	f.start()
	require.Equal(f.t, map[string]string{"articles-04": "alpha", "videos-08": "beta"}, f.awaitPublishes(2))
	f.awaitWaits(1) // gamma, for its retry
	require.NoError(f.t, f.s.StopCycle(context.Background(), "beta"))
}

// do serves one request; a body of "" sends none.
func (f *apiFixture) do(method, target, body string) *httptest.ResponseRecorder {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(f.t.Context(), method, target, r)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

func TestAPIListsCycles(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.threeCycles()

	for _, path := range []string{"/cycles", "/scheduler"} {
		rec := f.do(http.MethodGet, path, "")
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		st := jsonapitest.Decode[carousel.Status](t, rec, http.StatusOK)
		assert.True(t, st.Started)
		require.Len(t, st.Cycles, 3)

		alpha, beta, gamma := st.Cycles[0], st.Cycles[1], st.Cycles[2]
		assert.Equal(t, "alpha", alpha.ID)
		assert.Equal(t, alphaConfig, alpha.Config)
		assert.Equal(t, []carousel.State{carousel.Running}, alpha.Metadata.States)
		assert.Equal(t, 2, alpha.Metadata.Iteration)
		assert.Equal(t, 3, alpha.Metadata.Completed)
		assert.Equal(t, 10, alpha.Metadata.Total)
		assert.Equal(t, 1, alpha.Metadata.Errors)
		assert.Equal(t, "articles-04", alpha.Metadata.CurrentItem)
		assert.Equal(t, 30*time.Second, alpha.Metadata.Throttle)
		assert.InDelta(t, 0.3, alpha.Metadata.Progress(), 1e-9)

		assert.Equal(t, "beta", beta.ID)
		assert.Equal(t, []carousel.State{carousel.Stopped}, beta.Metadata.States)
		assert.Equal(t, 7, beta.Metadata.Completed)

		assert.Equal(t, "gamma", gamma.ID)
		assert.Equal(t, []carousel.State{carousel.Starting, carousel.Unhealthy}, gamma.Metadata.States)
		assert.Equal(t, 2, gamma.Metadata.Completed)
		assert.Equal(t, 5, gamma.Metadata.Total)
		assert.Contains(t, gamma.Metadata.LastError, errSourceDown.Error())
		assert.False(t, gamma.Metadata.WindowStart.IsZero())
	}

	// The derived fields are in the JSON for clients that do not compute them.
	var raw struct {
		Cycles []struct {
			Metadata struct {
				Progress float64 `json:"progress"`
				Throttle string  `json:"throttle"`
			} `json:"metadata"`
		} `json:"cycles"`
	}
	require.NoError(t, json.Unmarshal(f.do(http.MethodGet, "/cycles", "").Body.Bytes(), &raw))
	assert.InDelta(t, 0.3, raw.Cycles[0].Metadata.Progress, 1e-9)
	assert.Equal(t, "30s", raw.Cycles[0].Metadata.Throttle)
}

func TestAPIGetCycle(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.add(alphaConfig)

	st := jsonapitest.Decode[carousel.CycleStatus](t, f.do(http.MethodGet, "/cycles/alpha", ""), http.StatusOK)
	assert.Equal(t, "alpha", st.ID)
	assert.Equal(t, alphaConfig, st.Config)
	assert.Equal(t, []carousel.State{carousel.Stopped}, st.Metadata.States)

	e := jsonapitest.DecodeError(t, f.do(http.MethodGet, "/cycles/nope", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "nope")
}

func TestAPIAddCycle(t *testing.T) {
	f := newAPIFixture(t, nil)
	body := `{"name":"delta","type":"FixedWindow","origin":"wordpress","collection":"posts",
		"coolDown":"5m","timeWindow":"1h","minimumThrottle":"1m"}`

	rec := f.do(http.MethodPost, "/cycles", body)
	st := jsonapitest.Decode[carousel.CycleStatus](t, rec, http.StatusCreated)
	assert.Equal(t, "/cycles/delta", rec.Header().Get("Location"))
	assert.Equal(t, "delta", st.ID)
	assert.Equal(t, carousel.CycleConfig{Name: "delta", Type: carousel.FixedWindow, Origin: "wordpress",
		Collection: "posts", CoolDown: 5 * time.Minute, TimeWindow: time.Hour, MinimumThrottle: time.Minute}, st.Config)
	assert.Equal(t, []carousel.State{carousel.Stopped}, st.Metadata.States, "the scheduler is not started")

	got, err := f.s.Cycle("delta")
	require.NoError(t, err)
	assert.Equal(t, st.Config, got.Config)

	e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/cycles", body), http.StatusConflict)
	assert.Contains(t, e.Error, "delta")
}

func TestAPIAddCycleRefusesBadBodies(t *testing.T) {
	valid := `"name":"delta","type":"ThrottledWholeCollection","origin":"o","collection":"c","coolDown":"5m","throttle":"1s"`
	tests := []struct {
		name       string
		body       string
		status     int
		fields     []jsonapi.FieldError // nil: none expected
		errPattern string               // in the message
	}{
		{name: "invalid fields", body: `{"name":"bad name!","type":"Nope","origin":" ","collection":"c","coolDown":"soon"}`,
			status: http.StatusBadRequest, fields: []jsonapi.FieldError{
				{Field: "coolDown", Value: "soon", Problem: "is not a duration (e.g. 90s, 15m, 1h)"},
				{Field: "name", Value: "bad name!", Problem: "must be 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit"},
				{Field: "type", Value: "Nope", Problem: "must be ThrottledWholeCollection, FixedWindow or ScalingWindow"},
				{Field: "origin", Problem: "is required"},
			}, errPattern: `coolDown "soon" is not a duration`},
		{name: "missing throttle", body: `{"name":"delta","type":"ThrottledWholeCollection","origin":"o","collection":"c","coolDown":"5m"}`,
			status: http.StatusBadRequest, fields: []jsonapi.FieldError{{Field: "throttle", Problem: "is required"}}},
		{name: "unknown field", body: `{` + valid + `,"colour":"red"}`,
			status: http.StatusBadRequest, fields: []jsonapi.FieldError{{Field: "colour", Problem: "is not a known field"}}},
		{name: "wrong JSON type", body: `{"name":5}`, status: http.StatusBadRequest, errPattern: "name",
			fields: []jsonapi.FieldError{{Field: "name", Problem: "must be a JSON string, not number"}}},
		{name: "malformed", body: `{"name":`, status: http.StatusBadRequest, errPattern: "malformed JSON"},
		{name: "syntax error", body: `{"name" "delta"}`, status: http.StatusBadRequest, errPattern: "malformed JSON at byte"},
		{name: "empty", body: "", status: http.StatusBadRequest, errPattern: "empty"},
		{name: "two values", body: `{` + valid + `} {}`, status: http.StatusBadRequest, errPattern: "nothing after it"},
		{name: "not an object", body: `[1]`, status: http.StatusBadRequest, errPattern: "array"},
		{name: "too large", body: `{"name":"` + strings.Repeat("x", 70<<10) + `"}`,
			status: http.StatusRequestEntityTooLarge, errPattern: "larger than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAPIFixture(t, nil)
			e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/cycles", tt.body), tt.status)
			if tt.fields == nil {
				assert.Empty(t, e.Fields)
			} else {
				assert.ElementsMatch(t, tt.fields, e.Fields)
			}
			assert.Contains(t, e.Error, tt.errPattern)
			assert.NotContains(t, e.Error, "\n", "one line, not errors.Join's")
			assert.Empty(t, f.s.Cycles(), "nothing added")
		})
	}
}

func TestAPIDeleteCycle(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.put("articles", 10)
	f.add(alphaConfig)
	f.start()
	f.awaitPublishes(1)

	rec := f.do(http.MethodDelete, "/cycles/alpha", "")
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Empty(t, rec.Body.String())
	_, ok, err := f.store.Load(context.Background(), "alpha")
	require.NoError(t, err)
	assert.False(t, ok, "the saved metadata is deleted too")

	jsonapitest.DecodeError(t, f.do(http.MethodGet, "/cycles/alpha", ""), http.StatusNotFound)
	e := jsonapitest.DecodeError(t, f.do(http.MethodDelete, "/cycles/alpha", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "alpha")
}

func TestAPIThrottle(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.threeCycles()

	type throttle struct {
		Throttle string `json:"throttle"`
	}
	assert.Equal(t, throttle{"30s"}, jsonapitest.Decode[throttle](t, f.do(http.MethodGet, "/cycles/alpha/throttle", ""), http.StatusOK))
	assert.Equal(t, throttle{"5s"}, jsonapitest.Decode[throttle](t, f.do(http.MethodPut, "/cycles/alpha/throttle", `{"throttle":"5s"}`), http.StatusOK))
	assert.Equal(t, throttle{"5s"}, jsonapitest.Decode[throttle](t, f.do(http.MethodGet, "/cycles/alpha/throttle", ""), http.StatusOK))
	assert.Equal(t, throttle{"12m0s"}, jsonapitest.Decode[throttle](t, f.do(http.MethodGet, "/cycles/gamma/throttle", ""), http.StatusOK),
		"a windowed cycle's throttle is computed: gamma's hour over the 5 items it restored")

	tests := []struct {
		name   string
		path   string
		body   string
		status int
		field  *jsonapi.FieldError
	}{
		{"not a duration", "/cycles/alpha/throttle", `{"throttle":"fast"}`, http.StatusBadRequest,
			&jsonapi.FieldError{Field: "throttle", Value: "fast", Problem: "is not a duration (e.g. 5s, 1m30s)"}},
		{"negative", "/cycles/alpha/throttle", `{"throttle":"-1s"}`, http.StatusBadRequest,
			&jsonapi.FieldError{Field: "throttle", Value: "-1s", Problem: "must be positive"}},
		{"zero", "/cycles/alpha/throttle", `{"throttle":"0s"}`, http.StatusBadRequest,
			&jsonapi.FieldError{Field: "throttle", Value: "0s", Problem: "must be positive"}},
		{"missing", "/cycles/alpha/throttle", `{}`, http.StatusBadRequest,
			&jsonapi.FieldError{Field: "throttle", Problem: "is required"}},
		{"a number", "/cycles/alpha/throttle", `{"throttle":5}`, http.StatusBadRequest,
			&jsonapi.FieldError{Field: "throttle", Problem: "must be a JSON string, not number"}},
		{"unknown field", "/cycles/alpha/throttle", `{"throttle":"5s","burst":2}`, http.StatusBadRequest,
			&jsonapi.FieldError{Field: "burst", Problem: "is not a known field"}},
		{"malformed", "/cycles/alpha/throttle", `{"throttle":`, http.StatusBadRequest, nil},
		{"windowed", "/cycles/gamma/throttle", `{"throttle":"5s"}`, http.StatusConflict, nil},
		{"unknown cycle", "/cycles/nope/throttle", `{"throttle":"fast"}`, http.StatusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := jsonapitest.DecodeError(t, f.do(http.MethodPut, tt.path, tt.body), tt.status)
			if tt.field != nil {
				assert.Equal(t, []jsonapi.FieldError{*tt.field}, e.Fields)
			} else {
				assert.Empty(t, e.Fields)
			}
		})
	}
	assert.Equal(t, throttle{"5s"}, jsonapitest.Decode[throttle](t, f.do(http.MethodGet, "/cycles/alpha/throttle", ""), http.StatusOK),
		"the refused changes changed nothing")
	jsonapitest.DecodeError(t, f.do(http.MethodGet, "/cycles/nope/throttle", ""), http.StatusNotFound)
}

func TestAPICycleActions(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.threeCycles()

	st := jsonapitest.Decode[carousel.CycleStatus](t, f.do(http.MethodPost, "/cycles/alpha/stop", ""), http.StatusOK)
	assert.Equal(t, []carousel.State{carousel.Stopped}, st.Metadata.States)
	assert.Equal(t, 3, st.Metadata.Completed, "the interrupted publish is not counted")

	st = jsonapitest.Decode[carousel.CycleStatus](t, f.do(http.MethodPost, "/cycles/alpha/resume", ""), http.StatusOK)
	assert.Contains(t, []carousel.State{carousel.Starting, carousel.Running}, st.Metadata.States[0])
	// The stopped publish began at the epoch: the next keeps the 30 s throttle.
	f.awaitWaits(2) // gamma's retry and alpha's pace
	f.clk.Advance(30 * time.Second)
	assert.Equal(t, map[string]string{"articles-04": "alpha"}, f.awaitPublishes(1), "resumed where it stopped")

	st = jsonapitest.Decode[carousel.CycleStatus](t, f.do(http.MethodPost, "/cycles/alpha/reset", ""), http.StatusOK)
	assert.Equal(t, 0, st.Metadata.Completed)
	f.awaitWaits(2)
	f.clk.Advance(30 * time.Second)
	assert.Equal(t, map[string]string{"articles-01": "alpha"}, f.awaitPublishes(1), "restarted from the beginning")

	for _, action := range []string{"stop", "resume", "reset"} {
		e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/cycles/nope/"+action, ""), http.StatusNotFound)
		assert.Contains(t, e.Error, "nope", action)
	}
}

// A reset on an instance another has taken over from is refused by the store: a
// conflict, which leaves the other's progress as it was.
func TestAPIResetOnAStaleInstanceConflicts(t *testing.T) {
	f := newAPIFixture(t, func(c *carousel.Config) {
		c.Toggle = carousel.ToggleFunc(func(context.Context) (bool, carousel.Generation, error) { return true, 4, nil })
	})
	f.put("articles", 10)
	f.add(alphaConfig)
	f.start()
	f.awaitPublishes(1)
	assert.Equal(t, carousel.Generation(4), f.s.Status().Generation)
	taken := carousel.CycleMetadata{CycleID: "alpha", Config: alphaConfig, Iteration: 9, Total: 10, Completed: 5,
		Last: carousel.Item{ID: "articles-05"}, InProgress: true, States: []carousel.State{carousel.Running}}
	require.NoError(t, f.store.Save(context.Background(), taken, 5), "another instance's save")

	e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/cycles/alpha/reset", ""), http.StatusConflict)
	assert.Contains(t, e.Error, "later activation")
	saved, _, err := f.store.Load(context.Background(), "alpha")
	require.NoError(t, err)
	assert.Equal(t, taken, saved)
}

func TestAPIResumeWhenNotStartedConflicts(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.add(alphaConfig)
	e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/cycles/alpha/resume", ""), http.StatusConflict)
	assert.Contains(t, e.Error, "passive")
}

func TestAPISchedulerStartAndShutdown(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.put("articles", 10)
	f.add(alphaConfig)

	st := jsonapitest.Decode[carousel.Status](t, f.do(http.MethodGet, "/scheduler", ""), http.StatusOK)
	assert.False(t, st.Started)

	st = jsonapitest.Decode[carousel.Status](t, f.do(http.MethodPost, "/scheduler/start", ""), http.StatusOK)
	assert.True(t, st.Started)
	assert.Equal(t, map[string]string{"articles-01": "alpha"}, f.awaitPublishes(1))

	st = jsonapitest.Decode[carousel.Status](t, f.do(http.MethodPost, "/scheduler/shutdown", ""), http.StatusOK)
	assert.False(t, st.Started)
	require.Len(t, st.Cycles, 1)
	assert.Equal(t, []carousel.State{carousel.Stopped}, st.Cycles[0].Metadata.States)
}

// apiLeaseHeld is a Promoter that another instance has beaten to the lease.
type apiLeaseHeld struct{}

func (apiLeaseHeld) Active(context.Context) (bool, carousel.Generation, error) { return false, 0, nil }

func (apiLeaseHeld) Promote(context.Context) (carousel.Generation, error) {
	return 0, fmt.Errorf("lease held by instance b: %w", carousel.ErrLeaseHeld)
}

func TestAPISchedulerStartRefused(t *testing.T) {
	tests := []struct {
		name    string
		toggle  carousel.Toggle
		status  int
		message string
	}{
		{"passive", carousel.ToggleFunc(func(context.Context) (bool, carousel.Generation, error) { return false, 0, nil }),
			http.StatusConflict, "passive"},
		{"lease held", apiLeaseHeld{}, http.StatusConflict, "lease held by instance b"},
		{"toggle fails", carousel.ToggleFunc(func(context.Context) (bool, carousel.Generation, error) {
			return false, 0, errors.New("lock server down")
		}),
			http.StatusInternalServerError, "lock server down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAPIFixture(t, func(c *carousel.Config) { c.Toggle = tt.toggle })
			e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/scheduler/start", ""), tt.status)
			assert.Contains(t, e.Error, tt.message)
			assert.False(t, f.s.Status().Started)
		})
	}
}

func TestAPIHealth(t *testing.T) {
	type health struct {
		Status    string   `json:"status"`
		Started   bool     `json:"started"`
		Active    bool     `json:"active"`
		Cycles    int      `json:"cycles"`
		Unhealthy []string `json:"unhealthy"`
	}
	f := newAPIFixture(t, nil)
	assert.Equal(t, health{Status: "ok"}, jsonapitest.Decode[health](t, f.do(http.MethodGet, "/health", ""), http.StatusOK))

	f.threeCycles()
	assert.Equal(t, health{Status: "unhealthy", Started: true, Active: true, Cycles: 3, Unhealthy: []string{"gamma"}},
		jsonapitest.Decode[health](t, f.do(http.MethodGet, "/health", ""), http.StatusServiceUnavailable))

	// Shut down now: gamma still shows it was unhealthy, but a standby is healthy.
	require.NoError(t, f.s.Shutdown(t.Context()))
	gamma, err := f.s.Cycle("gamma")
	require.NoError(t, err)
	require.True(t, gamma.Metadata.Has(carousel.Unhealthy))
	assert.Equal(t, health{Status: "ok", Active: true, Cycles: 3}, jsonapitest.Decode[health](t, f.do(http.MethodGet, "/health", ""), http.StatusOK))
}

func TestAPIRoutingErrorsAreJSON(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.add(alphaConfig)
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, "/nope", http.StatusNotFound, ""},
		{http.MethodGet, "/cycles/", http.StatusNotFound, ""},
		{http.MethodGet, "/cycles/alpha/bogus", http.StatusNotFound, ""},
		{http.MethodPost, "/health/x", http.StatusNotFound, ""},
		{http.MethodPost, "/", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodDelete, "/cycles", http.StatusMethodNotAllowed, "GET, HEAD, POST"},
		{http.MethodPost, "/cycles/alpha", http.StatusMethodNotAllowed, "DELETE, GET, HEAD"},
		{http.MethodPatch, "/cycles/alpha/throttle", http.StatusMethodNotAllowed, "GET, HEAD, PUT"},
		{http.MethodGet, "/cycles/alpha/stop", http.StatusMethodNotAllowed, "POST"},
		{http.MethodGet, "/scheduler/start", http.StatusMethodNotAllowed, "POST"},
		{http.MethodPut, "/scheduler", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPost, "/health", http.StatusMethodNotAllowed, "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := f.do(tt.method, tt.path, "")
			e := jsonapitest.DecodeError(t, rec, tt.status)
			assert.Equal(t, tt.allow, rec.Header().Get("Allow"))
			if tt.status == http.StatusMethodNotAllowed {
				assert.Contains(t, e.Error, tt.allow)
			}
		})
	}
}

// TestAPIHeadHasNoBody runs over a real server: a recorder keeps a HEAD's body.
func TestAPIHeadHasNoBody(t *testing.T) {
	f := newAPIFixture(t, nil)
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodHead, srv.URL+"/cycles", nil)
	require.NoError(t, err)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Empty(t, b)
}

func TestAPIRefusesCrossOriginChanges(t *testing.T) {
	f := newAPIFixture(t, nil)
	f.add(alphaConfig)
	send := func(method, path, site string) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), method, path, nil)
		req.Header.Set("Sec-Fetch-Site", site)
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return rec
	}

	e := jsonapitest.DecodeError(t, send(http.MethodPost, "/scheduler/start", "cross-site"), http.StatusForbidden)
	assert.Contains(t, e.Error, "cross-origin")
	jsonapitest.DecodeError(t, send(http.MethodDelete, "/cycles/alpha", "cross-site"), http.StatusForbidden)
	assert.False(t, f.s.Status().Started)
	assert.Len(t, f.s.Cycles(), 1)

	assert.Equal(t, http.StatusOK, send(http.MethodGet, "/cycles", "cross-site").Code, "reading is no change")
	assert.Equal(t, http.StatusOK, send(http.MethodPost, "/scheduler/start", "same-origin").Code, "the status page's own buttons")
}
