package locks_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

// apiEpoch is where the fake clock of every API test starts.
var apiEpoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// apiFixture is a MemoryStore on a fake clock behind NewHandler.
type apiFixture struct {
	t     *testing.T
	clk   *clocktest.Fake
	store *locks.MemoryStore
	h     http.Handler
	// replays counts the calls of OnReplay. ServeHTTP runs on the test's goroutine, so
	// it needs no lock.
	replays int
}

func newAPIFixture(t *testing.T) *apiFixture {
	t.Helper()
	f := &apiFixture{t: t, clk: clocktest.NewFake(apiEpoch), store: locks.NewMemoryStore(0)}
	f.h = locks.NewHandler(f.store, locks.HandlerOptions{
		Logger:   slog.New(slog.NewTextHandler(t.Output(), nil)),
		Clock:    f.clk,
		OnReplay: func() { f.replays++ },
	})
	return f
}

// do serves one request; a body of "" sends none. header holds name, value pairs.
func (f *apiFixture) do(method, target, body string, header ...string) *httptest.ResponseRecorder {
	f.t.Helper()
	return apiServe(f.t, f.h, method, target, body, header...)
}

func apiServe(t *testing.T, h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, target, r)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// sensor registers a sensor with an address of its own.
func (f *apiFixture) sensor(id string) locks.Sensor {
	f.t.Helper()
	s := locks.Sensor{ID: locks.SensorID(id), Address: "Moscow, Svobody st. 23, room " + id}
	require.NoError(f.t, f.store.CreateSensor(f.t.Context(), s))
	return s
}

// client registers a client named name.
func (f *apiFixture) client(name string) locks.Client {
	f.t.Helper()
	c, err := f.store.CreateClient(f.t.Context(), locks.Client{Name: name, URL: "https://" + name + ".example.com/locks"})
	require.NoError(f.t, err)
	return c
}

func (f *apiFixture) link(sensor string, c locks.Client) {
	f.t.Helper()
	require.NoError(f.t, f.store.Link(f.t.Context(), locks.SensorID(sensor), c.ID))
}

// read stores readings of sensor taken at ats, alternating 1 and 0, and returns them
// as the Store keeps them.
func (f *apiFixture) read(sensor string, ats ...time.Time) []locks.StoredReading {
	f.t.Helper()
	var rs []locks.StoredReading
	for i, at := range ats {
		rs = append(rs, locks.StoredReading{SensorID: locks.SensorID(sensor), State: locks.State(1 - i%2), At: at,
			Received: f.clk.Now(), Outcome: locks.Changed})
	}
	_, err := f.store.Update(f.t.Context(), []locks.SensorID{locks.SensorID(sensor)},
		func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
			return locks.Effects{Readings: rs, Now: f.clk.Now()}, nil
		})
	require.NoError(f.t, err)
	all, err := f.store.Readings(f.t.Context(), locks.SensorID(sensor), locks.Range{Limit: 1000})
	require.NoError(f.t, err)
	return all
}

// notify creates a changed notification of sensor at at for every linked client, and
// returns every notification of the sensor as the Store keeps them.
func (f *apiFixture) notify(sensor string, ats ...time.Time) []locks.Notification {
	f.t.Helper()
	var cs []locks.Change
	for _, at := range ats {
		cs = append(cs, locks.Change{SensorID: locks.SensorID(sensor), Event: locks.EventChanged, State: 1, At: at, ReadingAt: at})
	}
	_, err := f.store.Update(f.t.Context(), []locks.SensorID{locks.SensorID(sensor)},
		func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
			return locks.Effects{Notify: cs, Now: f.clk.Now()}, nil
		})
	require.NoError(f.t, err)
	all, err := f.store.Notifications(f.t.Context(), locks.SensorID(sensor), locks.Range{Limit: 1000})
	require.NoError(f.t, err)
	return all
}

// kill makes every pending notification dead after one failed attempt, and returns
// their ids.
func (f *apiFixture) kill() []locks.NotificationID {
	f.t.Helper()
	now := f.clk.Now()
	ds, err := f.store.Claim(f.t.Context(), locks.ClaimRequest{Now: now, Limit: 1000, MaxAttempts: 5,
		RetryAfter: func(int) time.Duration { return time.Minute }})
	require.NoError(f.t, err)
	var ids []locks.NotificationID
	for _, d := range ds {
		require.NoError(f.t, f.store.Finish(f.t.Context(), locks.Result{Notification: d.ID, N: d.Attempts, At: now,
			Attempt: &locks.Attempt{Notification: d.ID, N: d.Attempts, At: now, Duration: 20 * time.Millisecond,
				StatusCode: http.StatusBadGateway, Error: "502 Bad Gateway"},
			Status: locks.Dead, Reason: "gave up after 1 attempt"}))
		ids = append(ids, d.ID)
	}
	return ids
}

// refuse stores raws as dead letters.
func (f *apiFixture) refuse(raws ...[]byte) {
	f.t.Helper()
	var ds []locks.DeadLetter
	for _, raw := range raws {
		ds = append(ds, locks.DeadLetter{Raw: raw, Reason: "data: 2 is not 0 or 1", Received: f.clk.Now()})
	}
	_, err := f.store.Update(f.t.Context(), nil, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return locks.Effects{DeadLetters: ds, Now: f.clk.Now()}, nil
	})
	require.NoError(f.t, err)
}

// The bodies the API answers.
type (
	apiSensorsPage struct {
		Sensors []locks.Sensor `json:"sensors"`
		Next    string         `json:"next"`
	}
	apiClientsPage struct {
		Clients []locks.Client `json:"clients"`
		Next    string         `json:"next"`
	}
	apiReadingsPage struct {
		Readings   []locks.StoredReading `json:"readings"`
		NextCursor string                `json:"next_cursor"`
	}
	apiNotificationsPage struct {
		Notifications []locks.Notification `json:"notifications"`
		Next          string               `json:"next"`
		NextCursor    string               `json:"next_cursor"`
	}
	apiDeadLettersPage struct {
		DeadLetters []apiDeadLetter `json:"dead_letters"`
		Next        string          `json:"next"`
	}
	apiDeadLetter struct {
		ID        int64     `json:"id"`
		Reason    string    `json:"reason"`
		Received  time.Time `json:"received_at"`
		Raw       *string   `json:"raw"`
		RawBase64 []byte    `json:"raw_base64"`
	}
)

// apiPages follows a list from first (which has a query) through every page, passing
// what next returns as param, and returns the pages.
func apiPages[P any](f *apiFixture, first, param string, next func(P) string) []P {
	f.t.Helper()
	var pages []P
	target := first
	for range 100 {
		p := jsonapitest.Decode[P](f.t, f.do(http.MethodGet, target, ""), http.StatusOK)
		pages = append(pages, p)
		n := next(p)
		if n == "" {
			return pages
		}
		target = first + "&" + param + "=" + url.QueryEscape(n)
	}
	f.t.Fatalf("%s: more than 100 pages", first)
	return nil
}

func TestAPIHealth(t *testing.T) {
	f := newAPIFixture(t)
	rec := f.do(http.MethodGet, "/health", "")
	assert.JSONEq(t, `{"status":"ok"}`, rec.Body.String())
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))

	rec = f.do(http.MethodHead, "/health", "")
	assert.Equal(t, http.StatusOK, rec.Code)
}

func TestAPIStats(t *testing.T) {
	s := locks.NewMemoryStore(0)
	h := locks.NewHandler(s, locks.HandlerOptions{Stats: func() any {
		return map[string]int{"received": 12, "delivered": 3}
	}})
	rec := apiServe(t, h, http.MethodGet, "/stats", "")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"received":12,"delivered":3}`, rec.Body.String())

	// Without Stats there is no such resource.
	f := newAPIFixture(t)
	e := jsonapitest.DecodeError(t, f.do(http.MethodGet, "/stats", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "/stats")
}

func TestAPISensorLifecycle(t *testing.T) {
	f := newAPIFixture(t)

	rec := f.do(http.MethodPost, "/sensors", `{"id":"xa7v9Dfadr7H","address":"Moscow, Russia, Svobody st. 23 fl 1 room 16"}`)
	created := jsonapitest.Decode[locks.Sensor](t, rec, http.StatusCreated)
	want := locks.Sensor{ID: "xa7v9Dfadr7H", Address: "Moscow, Russia, Svobody st. 23 fl 1 room 16"}
	assert.Equal(t, want, created)
	assert.Equal(t, "/sensors/xa7v9Dfadr7H", rec.Header().Get("Location"))
	got, err := f.store.GetSensor(t.Context(), "xa7v9Dfadr7H")
	require.NoError(t, err)
	assert.Equal(t, want, got)

	e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/sensors", `{"id":"xa7v9Dfadr7H","address":"elsewhere"}`), http.StatusConflict)
	assert.Contains(t, e.Error, "xa7v9Dfadr7H")
	got, err = f.store.GetSensor(t.Context(), "xa7v9Dfadr7H")
	require.NoError(t, err)
	assert.Equal(t, want, got, "a refused registration changes nothing")

	assert.Equal(t, want, jsonapitest.Decode[locks.Sensor](t, f.do(http.MethodGet, "/sensors/xa7v9Dfadr7H", ""), http.StatusOK))

	// The id may be left out of a PUT, or repeated.
	moved := locks.Sensor{ID: "xa7v9Dfadr7H", Address: "Moscow, Russia, Svobody st. 25 fl 2 room 3"}
	assert.Equal(t, moved, jsonapitest.Decode[locks.Sensor](t, f.do(http.MethodPut, "/sensors/xa7v9Dfadr7H",
		`{"address":"Moscow, Russia, Svobody st. 25 fl 2 room 3"}`), http.StatusOK))
	assert.Equal(t, moved, jsonapitest.Decode[locks.Sensor](t, f.do(http.MethodGet, "/sensors/xa7v9Dfadr7H", ""), http.StatusOK))
	moved.Address = "Tverskaya st. 1"
	assert.Equal(t, moved, jsonapitest.Decode[locks.Sensor](t, f.do(http.MethodPut, "/sensors/xa7v9Dfadr7H",
		`{"id":"xa7v9Dfadr7H","address":"Tverskaya st. 1"}`), http.StatusOK))
	got, err = f.store.GetSensor(t.Context(), "xa7v9Dfadr7H")
	require.NoError(t, err)
	assert.Equal(t, moved, got)

	rec = f.do(http.MethodDelete, "/sensors/xa7v9Dfadr7H", "")
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Empty(t, rec.Body.String())
	_, err = f.store.GetSensor(t.Context(), "xa7v9Dfadr7H")
	require.ErrorIs(t, err, locks.ErrNotFound)
	jsonapitest.DecodeError(t, f.do(http.MethodGet, "/sensors/xa7v9Dfadr7H", ""), http.StatusNotFound)
	jsonapitest.DecodeError(t, f.do(http.MethodDelete, "/sensors/xa7v9Dfadr7H", ""), http.StatusNotFound)
}

func TestAPISensorState(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("0xA")
	f.sensor("TestSensor")

	// Never read: the state is null.
	rec := f.do(http.MethodGet, "/sensors/0xA/state", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"sensor_id":"0xA","state":null,"lost":false,"sequence":0}`, rec.Body.String())

	cur := locks.Current{SensorID: "TestSensor", Known: true, State: 1, ReadingAt: apiEpoch.Add(-time.Minute),
		ChangedAt: apiEpoch.Add(-time.Hour), LastSeen: apiEpoch, Lost: false}
	_, err := f.store.Update(t.Context(), []locks.SensorID{"TestSensor"}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return locks.Effects{States: []locks.Current{cur}, Now: apiEpoch}, nil
	})
	require.NoError(t, err)

	rec = f.do(http.MethodGet, "/sensors/TestSensor/state", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"sensor_id":"TestSensor","state":1,"reading_at":"2026-03-02T08:59:00Z",
		"changed_at":"2026-03-02T08:00:00Z","last_seen":"2026-03-02T09:00:00Z","lost":false,"sequence":0}`, rec.Body.String())
	var back locks.Current
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &back))
	assert.Equal(t, cur, back)

	e := jsonapitest.DecodeError(t, f.do(http.MethodGet, "/sensors/ghost/state", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "ghost")
}

func TestAPIListsSensorsInPages(t *testing.T) {
	f := newAPIFixture(t)
	assert.Equal(t, apiSensorsPage{Sensors: []locks.Sensor{}},
		jsonapitest.Decode[apiSensorsPage](t, f.do(http.MethodGet, "/sensors", ""), http.StatusOK), "[] when there are none")

	// Byte order: digits, then upper case, then lower case.
	var want []locks.Sensor
	for _, id := range []string{"0xA", "A1", "B2", "TestSensor", "a1", "xa7v9Dfadr7H", "z"} {
		want = append(want, f.sensor(id))
	}

	all := jsonapitest.Decode[apiSensorsPage](t, f.do(http.MethodGet, "/sensors", ""), http.StatusOK)
	assert.Equal(t, apiSensorsPage{Sensors: want}, all, "one page by default, without next")

	pages := apiPages(f, "/sensors?limit=3", "after", func(p apiSensorsPage) string { return p.Next })
	require.Len(t, pages, 3)
	assert.Equal(t, apiSensorsPage{Sensors: want[:3], Next: "B2"}, pages[0])
	assert.Equal(t, apiSensorsPage{Sensors: want[3:6], Next: "xa7v9Dfadr7H"}, pages[1])
	assert.Equal(t, apiSensorsPage{Sensors: want[6:]}, pages[2])

	// A page that ends the list exactly has no next: no empty page to fetch after it.
	pages = apiPages(f, "/sensors?limit=7", "after", func(p apiSensorsPage) string { return p.Next })
	require.Len(t, pages, 1)
	assert.Equal(t, want, pages[0].Sensors)

	// after need not be a registered sensor.
	assert.Equal(t, want[4:], jsonapitest.Decode[apiSensorsPage](t, f.do(http.MethodGet, "/sensors?after=Z", ""), http.StatusOK).Sensors)
}

// The page-size rule of the kit: no limit, or 0, is a page of DefaultLimit; up to
// MaxLimit is taken as given, and a full page of the maximum still tells whether more
// follow (by id and by cursor); beyond it, or below 0, is a 400 (TestAPIBadRequests).
func TestAPIPageLimits(t *testing.T) {
	f := newAPIFixture(t)
	var ids []locks.SensorID
	for i := range locks.MaxLimit + 1 {
		ids = append(ids, f.sensor(fmt.Sprintf("s%04d", i)).ID)
	}
	for _, target := range []string{"/sensors", "/sensors?limit=0"} {
		p := jsonapitest.Decode[apiSensorsPage](t, f.do(http.MethodGet, target, ""), http.StatusOK)
		assert.Equal(t, locks.DefaultLimit, len(p.Sensors), target)
		assert.Equal(t, string(ids[locks.DefaultLimit-1]), p.Next, target)
	}
	pages := apiPages(f, fmt.Sprintf("/sensors?limit=%d", locks.MaxLimit), "after", func(p apiSensorsPage) string { return p.Next })
	require.Len(t, pages, 2, "a full page of the maximum, and the one sensor after it")
	assert.Equal(t, locks.MaxLimit, len(pages[0].Sensors))
	assert.Equal(t, string(ids[locks.MaxLimit-1]), pages[0].Next)
	assert.Equal(t, []locks.Sensor{{ID: ids[locks.MaxLimit], Address: "Moscow, Svobody st. 23, room " + string(ids[locks.MaxLimit])}}, pages[1].Sensors)

	require.NoError(t, f.store.DeleteSensor(t.Context(), ids[locks.MaxLimit]))
	p := jsonapitest.Decode[apiSensorsPage](t, f.do(http.MethodGet, fmt.Sprintf("/sensors?limit=%d", locks.MaxLimit), ""), http.StatusOK)
	assert.Equal(t, locks.MaxLimit, len(p.Sensors))
	assert.Empty(t, p.Next, "a page of the maximum that ends the list has no next")

	// By cursor: a sensor's readings.
	ats := make([]time.Time, locks.MaxLimit+1)
	for i := range ats {
		ats[i] = apiEpoch.Add(time.Duration(i) * time.Second)
	}
	f.read("s0000", ats...)
	rp := jsonapitest.Decode[apiReadingsPage](t, f.do(http.MethodGet, "/sensors/s0000/readings?limit=0", ""), http.StatusOK)
	assert.Equal(t, locks.DefaultLimit, len(rp.Readings))
	assert.NotEmpty(t, rp.NextCursor)
	rpages := apiPages(f, fmt.Sprintf("/sensors/s0000/readings?limit=%d", locks.MaxLimit), "cursor", func(p apiReadingsPage) string { return p.NextCursor })
	require.Len(t, rpages, 2)
	assert.Equal(t, locks.MaxLimit, len(rpages[0].Readings))
	require.Len(t, rpages[1].Readings, 1)
	assert.True(t, ats[locks.MaxLimit].Equal(rpages[1].Readings[0].At))
}

func TestAPIClientLifecycle(t *testing.T) {
	f := newAPIFixture(t)

	rec := f.do(http.MethodPost, "/clients", `{"name":"Front desk","url":"https://desk.example.com/locks"}`)
	created := jsonapitest.Decode[locks.Client](t, rec, http.StatusCreated)
	want := locks.Client{ID: 1, Name: "Front desk", URL: "https://desk.example.com/locks"}
	assert.Equal(t, want, created)
	assert.Equal(t, "/clients/1", rec.Header().Get("Location"))
	got, err := f.store.GetClient(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	rec = f.do(http.MethodPost, "/clients", `{"name":"Security","url":"http://10.0.0.7:8080/hook"}`)
	assert.Equal(t, locks.Client{ID: 2, Name: "Security", URL: "http://10.0.0.7:8080/hook"}, jsonapitest.Decode[locks.Client](t, rec, http.StatusCreated))
	assert.Equal(t, "/clients/2", rec.Header().Get("Location"))

	assert.Equal(t, want, jsonapitest.Decode[locks.Client](t, f.do(http.MethodGet, "/clients/1", ""), http.StatusOK))

	updated := locks.Client{ID: 1, Name: "Front desk (night)", URL: "https://night.example.com/locks"}
	assert.Equal(t, updated, jsonapitest.Decode[locks.Client](t, f.do(http.MethodPut, "/clients/1",
		`{"name":"Front desk (night)","url":"https://night.example.com/locks"}`), http.StatusOK))
	assert.Equal(t, updated, jsonapitest.Decode[locks.Client](t, f.do(http.MethodPut, "/clients/1",
		`{"id":1,"name":"Front desk (night)","url":"https://night.example.com/locks"}`), http.StatusOK), "the path's id may be repeated")
	got, err = f.store.GetClient(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, updated, got)

	rec = f.do(http.MethodDelete, "/clients/1", "")
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Empty(t, rec.Body.String())
	_, err = f.store.GetClient(t.Context(), 1)
	require.ErrorIs(t, err, locks.ErrNotFound)
	e := jsonapitest.DecodeError(t, f.do(http.MethodGet, "/clients/1", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "client 1")
	jsonapitest.DecodeError(t, f.do(http.MethodPut, "/clients/1", `{"name":"x","url":"https://x.example.com/"}`), http.StatusNotFound)
	jsonapitest.DecodeError(t, f.do(http.MethodDelete, "/clients/1", ""), http.StatusNotFound)
}

func TestAPIListsClientsInPages(t *testing.T) {
	f := newAPIFixture(t)
	assert.Equal(t, apiClientsPage{Clients: []locks.Client{}},
		jsonapitest.Decode[apiClientsPage](t, f.do(http.MethodGet, "/clients", ""), http.StatusOK))

	var want []locks.Client
	for _, name := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		want = append(want, f.client(name))
	}
	require.NoError(t, f.store.DeleteClient(t.Context(), want[1].ID)) // a gap in the ids
	want = append(want[:1], want[2:]...)

	assert.Equal(t, apiClientsPage{Clients: want}, jsonapitest.Decode[apiClientsPage](t, f.do(http.MethodGet, "/clients", ""), http.StatusOK))

	pages := apiPages(f, "/clients?limit=2", "after", func(p apiClientsPage) string { return p.Next })
	require.Len(t, pages, 2)
	assert.Equal(t, apiClientsPage{Clients: want[:2], Next: "3"}, pages[0])
	assert.Equal(t, apiClientsPage{Clients: want[2:]}, pages[1])

	pages = apiPages(f, "/clients?limit=1", "after", func(p apiClientsPage) string { return p.Next })
	require.Len(t, pages, 4)
	for i, p := range pages {
		assert.Equal(t, []locks.Client{want[i]}, p.Clients)
	}
}

func TestAPILinks(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	alpha, beta := f.client("alpha"), f.client("beta")

	assert.Equal(t, apiClientsPage{Clients: []locks.Client{}},
		jsonapitest.Decode[apiClientsPage](t, f.do(http.MethodGet, "/sensors/s1/clients", ""), http.StatusOK))

	for _, target := range []string{"/sensors/s1/clients/2", "/sensors/s1/clients/1", "/sensors/s1/clients/2"} {
		rec := f.do(http.MethodPut, target, "")
		assert.Equal(t, http.StatusNoContent, rec.Code, "%s: %s", target, rec.Body)
	}
	assert.Equal(t, apiClientsPage{Clients: []locks.Client{alpha, beta}},
		jsonapitest.Decode[apiClientsPage](t, f.do(http.MethodGet, "/sensors/s1/clients", ""), http.StatusOK))

	e := jsonapitest.DecodeError(t, f.do(http.MethodPut, "/sensors/s1/clients/42", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "client 42")
	e = jsonapitest.DecodeError(t, f.do(http.MethodPut, "/sensors/ghost/clients/1", ""), http.StatusNotFound)
	assert.Contains(t, e.Error, "ghost")

	rec := f.do(http.MethodDelete, "/sensors/s1/clients/1", "")
	assert.Equal(t, http.StatusNoContent, rec.Code, "body: %s", rec.Body)
	assert.Equal(t, []locks.Client{beta}, jsonapitest.Decode[apiClientsPage](t, f.do(http.MethodGet, "/sensors/s1/clients", ""), http.StatusOK).Clients)
	clients, err := f.store.Clients(t.Context(), "s1")
	require.NoError(t, err)
	assert.Equal(t, []locks.Client{beta}, clients)

	jsonapitest.DecodeError(t, f.do(http.MethodDelete, "/sensors/s1/clients/1", ""), http.StatusNotFound)
	jsonapitest.DecodeError(t, f.do(http.MethodGet, "/sensors/ghost/clients", ""), http.StatusNotFound)
}

func TestAPIReadingsInPages(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	f.sensor("s2")
	f.read("s2", apiEpoch) // another sensor's, never listed
	assert.Equal(t, apiReadingsPage{Readings: []locks.StoredReading{}},
		jsonapitest.Decode[apiReadingsPage](t, f.do(http.MethodGet, "/sensors/s1/readings", ""), http.StatusOK))

	// Three readings share a ts, so that pages split between entries of the same time.
	m := func(n int) time.Time { return apiEpoch.Add(time.Duration(n) * time.Minute) }
	all := f.read("s1", m(3), m(1), m(1), m(1), m(0), m(2), m(1))
	require.Len(t, all, 7)

	assert.Equal(t, apiReadingsPage{Readings: all},
		jsonapitest.Decode[apiReadingsPage](t, f.do(http.MethodGet, "/sensors/s1/readings", ""), http.StatusOK))

	for _, limit := range []int{1, 2, 3, 6, 7} {
		pages := apiPages(f, fmt.Sprintf("/sensors/s1/readings?limit=%d", limit), "cursor",
			func(p apiReadingsPage) string { return p.NextCursor })
		assert.Len(t, pages, (len(all)+limit-1)/limit, "limit %d", limit)
		var got []locks.StoredReading
		for i, p := range pages {
			if i < len(pages)-1 {
				assert.Len(t, p.Readings, limit)
			}
			got = append(got, p.Readings...)
		}
		assert.Equal(t, all, got, "limit %d", limit)
	}
}

func TestAPIReadingsFromTo(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	m := func(n int) time.Time { return apiEpoch.Add(time.Duration(n) * time.Minute) }
	all := f.read("s1", m(0), m(1), m(2), m(3), m(4))

	get := func(query string) []locks.StoredReading {
		t.Helper()
		return jsonapitest.Decode[apiReadingsPage](t, f.do(http.MethodGet, "/sensors/s1/readings?"+query, ""), http.StatusOK).Readings
	}
	assert.Equal(t, all[1:3], get("from=2026-03-02T09:01:00Z&to=2026-03-02T09:03:00Z"), "from is in, to is out")
	assert.Equal(t, all[3:], get("from=2026-03-02T09:03:00Z"))
	assert.Equal(t, all[:2], get("to=2026-03-02T09:02:00Z"))
	assert.Equal(t, all[1:2], get("from=2026-03-02T09:00:00.5Z&to=2026-03-02T09:01:30Z"), "fractions of a second")
	assert.Empty(t, get("from=2026-03-02T09:02:00Z&to=2026-03-02T09:02:00Z"), "an empty range")
	// Offsets, escaped or not: an unescaped "+" arrives as a space.
	assert.Equal(t, all[2:], get("from="+url.QueryEscape("2026-03-02T12:02:00+03:00")))
	assert.Equal(t, all[2:], get("from=2026-03-02T12:02:00+03:00"))
	assert.Equal(t, all[:1], get("to=2026-03-02T06:01:00-03:00"))

	// The cursor goes on within the same range.
	pages := apiPages(f, "/sensors/s1/readings?from=2026-03-02T09:01:00Z&to=2026-03-02T09:04:00Z&limit=2", "cursor",
		func(p apiReadingsPage) string { return p.NextCursor })
	require.Len(t, pages, 2)
	assert.Equal(t, all[1:3], pages[0].Readings)
	assert.Equal(t, all[3:4], pages[1].Readings)
}

func TestAPISensorNotificationsInPages(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	f.sensor("s2")
	alpha, beta := f.client("alpha"), f.client("beta")
	f.link("s1", alpha)
	f.link("s1", beta)
	f.link("s2", alpha)
	assert.Equal(t, apiNotificationsPage{Notifications: []locks.Notification{}},
		jsonapitest.Decode[apiNotificationsPage](t, f.do(http.MethodGet, "/sensors/s1/notifications", ""), http.StatusOK))

	f.notify("s2", apiEpoch)
	m := func(n int) time.Time { return apiEpoch.Add(time.Duration(n) * time.Minute) }
	f.notify("s1", m(2), m(0))
	f.clk.Advance(time.Second)
	all := f.notify("s1", m(1))
	require.Len(t, all, 6) // 3 changes, 2 clients each
	f.kill()               // every one gets an attempt in its history
	all = f.notify("s1")
	for _, n := range all {
		require.Len(t, n.History, 1, "notification %d", n.ID)
	}

	assert.Equal(t, apiNotificationsPage{Notifications: all},
		jsonapitest.Decode[apiNotificationsPage](t, f.do(http.MethodGet, "/sensors/s1/notifications", ""), http.StatusOK))

	for _, limit := range []int{1, 4, 5, 6} {
		pages := apiPages(f, fmt.Sprintf("/sensors/s1/notifications?limit=%d", limit), "cursor",
			func(p apiNotificationsPage) string { return p.NextCursor })
		assert.Len(t, pages, (len(all)+limit-1)/limit, "limit %d", limit)
		var got []locks.Notification
		for _, p := range pages {
			assert.Empty(t, p.Next)
			got = append(got, p.Notifications...)
		}
		assert.Equal(t, all, got, "limit %d", limit)
	}

	got := jsonapitest.Decode[apiNotificationsPage](t, f.do(http.MethodGet,
		"/sensors/s1/notifications?from=2026-03-02T09:01:00Z&to=2026-03-02T09:02:00Z", ""), http.StatusOK)
	assert.Equal(t, all[2:4], got.Notifications)
	for _, n := range got.Notifications {
		assert.Equal(t, m(1), n.At)
	}

	jsonapitest.DecodeError(t, f.do(http.MethodGet, "/sensors/ghost/notifications", ""), http.StatusNotFound)
}

// A notification, and the sensor's state, say the sequence of the event: an operator
// sees what a client was sent.
func TestAPINotificationHasItsSequence(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	f.link("s1", f.client("alpha"))
	read := apiEpoch.Add(-time.Minute + 1500*time.Microsecond)
	f.notify("s1", read)
	all := f.notify("s1", read.Add(time.Second))
	require.Len(t, all, 2)
	var got map[string]any
	rec := f.do(http.MethodGet, fmt.Sprintf("/notifications/%d", all[1].ID), "")
	require.Equal(t, http.StatusOK, rec.Code)
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, 2.0, got["sequence"], "%s", rec.Body)
	assert.Equal(t, "2026-03-02T08:59:01.0015Z", got["reading_at"], "%s", rec.Body)
	rec = f.do(http.MethodGet, "/sensors/s1/state", "")
	require.Equal(t, http.StatusOK, rec.Code)
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, 2.0, got["sequence"], "%s", rec.Body)
}

func TestAPIReplaysADeadNotification(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	f.link("s1", f.client("alpha"))
	f.notify("s1", apiEpoch.Add(-time.Minute))
	ids := f.kill()
	require.Len(t, ids, 1)
	id := ids[0]
	target := fmt.Sprintf("/notifications/%d", id)

	dead := jsonapitest.Decode[locks.Notification](t, f.do(http.MethodGet, target, ""), http.StatusOK)
	assert.Equal(t, locks.Dead, dead.Status)
	assert.Equal(t, "gave up after 1 attempt", dead.Reason)
	assert.Equal(t, 1, dead.Attempts)
	require.Len(t, dead.History, 1)
	assert.Equal(t, locks.Attempt{Notification: id, N: 1, At: apiEpoch, Duration: 20 * time.Millisecond,
		StatusCode: http.StatusBadGateway, Error: "502 Bad Gateway"}, dead.History[0])
	stored, err := f.store.Notification(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, stored, dead)

	f.clk.Advance(time.Hour)
	replayed := jsonapitest.Decode[locks.Notification](t, f.do(http.MethodPost, target+"/replay", ""), http.StatusOK)
	assert.Equal(t, 1, f.replays, "OnReplay")
	assert.Equal(t, locks.Pending, replayed.Status)
	assert.Equal(t, 0, replayed.Attempts)
	assert.Equal(t, apiEpoch.Add(time.Hour), replayed.NextAttempt, "due at the handler's clock")
	assert.Empty(t, replayed.Reason)
	assert.True(t, replayed.Finished.IsZero())
	assert.Len(t, replayed.History, 1, "the failed attempt stays in the history")
	n, due, err := f.store.Pending(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, apiEpoch.Add(time.Hour), due)

	e := jsonapitest.DecodeError(t, f.do(http.MethodPost, target+"/replay", ""), http.StatusConflict)
	assert.Contains(t, e.Error, "pending")
	assert.Equal(t, 1, f.replays, "no OnReplay for a refused replay")

	jsonapitest.DecodeError(t, f.do(http.MethodPost, "/notifications/42/replay", ""), http.StatusNotFound)
	assert.Equal(t, 1, f.replays)
}

func TestAPIReplayWithoutOnReplay(t *testing.T) {
	s := locks.NewMemoryStore(0)
	f := &apiFixture{t: t, clk: clocktest.NewFake(apiEpoch), store: s}
	f.sensor("s1")
	f.link("s1", f.client("alpha"))
	f.notify("s1", apiEpoch)
	ids := f.kill()
	h := locks.NewHandler(s, locks.HandlerOptions{})
	rec := apiServe(t, h, http.MethodPost, fmt.Sprintf("/notifications/%d/replay", ids[0]), "")
	n := jsonapitest.Decode[locks.Notification](t, rec, http.StatusOK)
	assert.Equal(t, locks.Pending, n.Status)
	assert.WithinDuration(t, time.Now(), n.NextAttempt, time.Minute, "due at the wall clock")
}

func TestAPIListsDeadNotificationsInPages(t *testing.T) {
	f := newAPIFixture(t)
	assert.Equal(t, apiNotificationsPage{Notifications: []locks.Notification{}},
		jsonapitest.Decode[apiNotificationsPage](t, f.do(http.MethodGet, "/notifications/dead", ""), http.StatusOK))

	f.sensor("s1")
	f.sensor("s2")
	f.link("s1", f.client("alpha"))
	f.link("s2", f.client("beta"))
	f.notify("s1", apiEpoch, apiEpoch.Add(time.Second))
	f.notify("s2", apiEpoch)
	dead := f.kill()
	require.Len(t, dead, 3)
	f.notify("s1", apiEpoch.Add(time.Minute)) // pending: not listed

	var want []locks.Notification
	for _, id := range dead {
		n, err := f.store.Notification(t.Context(), id)
		require.NoError(t, err)
		n.History = nil // listed without
		want = append(want, n)
	}

	pages := apiPages(f, "/notifications/dead?limit=2", "after", func(p apiNotificationsPage) string { return p.Next })
	require.Len(t, pages, 2)
	assert.Equal(t, apiNotificationsPage{Notifications: want[:2], Next: fmt.Sprint(want[1].ID)}, pages[0])
	assert.Equal(t, apiNotificationsPage{Notifications: want[2:]}, pages[1])

	jsonapitest.Decode[locks.Notification](t, f.do(http.MethodPost, fmt.Sprintf("/notifications/%d/replay", want[1].ID), ""), http.StatusOK)
	assert.Equal(t, apiNotificationsPage{Notifications: []locks.Notification{want[0], want[2]}},
		jsonapitest.Decode[apiNotificationsPage](t, f.do(http.MethodGet, "/notifications/dead", ""), http.StatusOK), "a replayed one is no longer dead")
}

func TestAPIListsDeadLettersInPages(t *testing.T) {
	f := newAPIFixture(t)
	assert.Equal(t, apiDeadLettersPage{DeadLetters: []apiDeadLetter{}},
		jsonapitest.Decode[apiDeadLettersPage](t, f.do(http.MethodGet, "/dead-letters", ""), http.StatusOK))

	f.refuse([]byte(`{"sensor_id":"s1","data":2,"ts":1764000000}`), []byte{0xff, 0xfe, 'x'}, []byte(`not json`))
	text := func(s string) *string { return &s }
	want := []apiDeadLetter{
		{ID: 1, Reason: "data: 2 is not 0 or 1", Received: apiEpoch, Raw: text(`{"sensor_id":"s1","data":2,"ts":1764000000}`)},
		{ID: 2, Reason: "data: 2 is not 0 or 1", Received: apiEpoch, RawBase64: []byte{0xff, 0xfe, 'x'}},
		{ID: 3, Reason: "data: 2 is not 0 or 1", Received: apiEpoch, Raw: text("not json")},
	}

	assert.Equal(t, apiDeadLettersPage{DeadLetters: want}, jsonapitest.Decode[apiDeadLettersPage](t, f.do(http.MethodGet, "/dead-letters", ""), http.StatusOK))
	pages := apiPages(f, "/dead-letters?limit=2", "after", func(p apiDeadLettersPage) string { return p.Next })
	require.Len(t, pages, 2)
	assert.Equal(t, apiDeadLettersPage{DeadLetters: want[:2], Next: "2"}, pages[0])
	assert.Equal(t, apiDeadLettersPage{DeadLetters: want[2:]}, pages[1])
}

func TestAPIRefusesBadRequests(t *testing.T) {
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name, method, target, body string
		field, value               string // "" when no field is named
		problem                    string // in the field's problem, or in the message when no field
	}{
		{name: "sensor id with a dash", method: http.MethodGet, target: "/sensors/bad-id!",
			field: "id", value: "bad-id!", problem: "only letters and digits"},
		{name: "sensor id of 17 characters", method: http.MethodGet, target: "/sensors/ABCDEFGHIJKLMNOPQ",
			field: "id", value: "ABCDEFGHIJKLMNOPQ", problem: "longer than 16"},
		{name: "sensor id in a sub-resource", method: http.MethodGet, target: "/sensors/bad-id!/readings",
			field: "id", value: "bad-id!", problem: "only letters and digits"},
		{name: "escaped slash in a sensor id", method: http.MethodDelete, target: "/sensors/s1%2Fx",
			field: "id", value: "s1/x", problem: "only letters and digits"},
		{name: "unfinished JSON", method: http.MethodPost, target: "/sensors", body: `{"id":"s2",`,
			problem: "ends too soon"},
		{name: "malformed JSON", method: http.MethodPost, target: "/sensors", body: `{"id":"s2" "address":"x"}`,
			problem: "malformed JSON at byte"},
		{name: "unknown field", method: http.MethodPost, target: "/sensors", body: `{"id":"s2","address":"x","floor":3}`,
			field: "floor", problem: "is not a known field"},
		{name: "trailing data", method: http.MethodPost, target: "/sensors", body: `{"id":"s2","address":"x"} {"id":"s3"}`,
			problem: "one JSON object and nothing after it"},
		{name: "empty body", method: http.MethodPost, target: "/sensors", problem: "empty"},
		{name: "array body", method: http.MethodPost, target: "/sensors", body: `["s2"]`, problem: "must be a JSON object, not array"},
		{name: "id of the wrong type", method: http.MethodPost, target: "/sensors", body: `{"id":2,"address":"x"}`,
			field: "id", problem: "must be a JSON string, not number"},
		{name: "missing sensor id", method: http.MethodPost, target: "/sensors", body: `{"address":"x"}`,
			field: "id", problem: "missing"},
		{name: "bad sensor id in a body", method: http.MethodPost, target: "/sensors", body: `{"id":"s-2","address":"x"}`,
			field: "id", value: "s-2", problem: "only letters and digits"},
		{name: "missing address", method: http.MethodPost, target: "/sensors", body: `{"id":"s2"}`,
			field: "address", problem: "missing"},
		{name: "missing address in a PUT", method: http.MethodPut, target: "/sensors/s1", body: `{"address":""}`,
			field: "address", problem: "missing"},
		{name: "sensor id mismatch", method: http.MethodPut, target: "/sensors/s1", body: `{"id":"s2","address":"x"}`,
			field: "id", value: "s2", problem: `differs from the path's "s1"`},
		{name: "empty sensor id in a PUT", method: http.MethodPut, target: "/sensors/s1", body: `{"id":"","address":"x"}`,
			field: "id", value: "", problem: "differs"},
		{name: "ftp url", method: http.MethodPost, target: "/clients", body: `{"name":"n","url":"ftp://example.com/hook"}`,
			field: "url", value: "ftp://example.com/hook", problem: "not an absolute http or https URL"},
		{name: "relative url", method: http.MethodPost, target: "/clients", body: `{"name":"n","url":"/hook"}`,
			field: "url", value: "/hook", problem: "not an absolute http or https URL"},
		{name: "missing url", method: http.MethodPut, target: "/clients/1", body: `{"name":"n"}`,
			field: "url", problem: "missing"},
		{name: "missing name", method: http.MethodPost, target: "/clients", body: `{"url":"https://example.com/hook"}`,
			field: "name", problem: "missing"},
		{name: "client id in a POST", method: http.MethodPost, target: "/clients", body: `{"id":7,"name":"n","url":"https://example.com/"}`,
			field: "id", value: "7", problem: "assigned by the service"},
		{name: "client id mismatch", method: http.MethodPut, target: "/clients/1", body: `{"id":2,"name":"n","url":"https://example.com/"}`,
			field: "id", value: "2", problem: "differs from the path's 1"},
		{name: "fractional client id in a body", method: http.MethodPut, target: "/clients/1", body: `{"id":1.5,"name":"n","url":"https://example.com/"}`,
			field: "id", problem: "must be a JSON number"},
		{name: "client id not a number", method: http.MethodGet, target: "/clients/abc", field: "id", value: "abc", problem: "whole number from 1"},
		{name: "client id zero", method: http.MethodGet, target: "/clients/0", field: "id", value: "0", problem: "whole number from 1"},
		{name: "client id negative", method: http.MethodDelete, target: "/clients/-1", field: "id", value: "-1", problem: "whole number from 1"},
		{name: "client id too big", method: http.MethodGet, target: "/clients/99999999999999999999", field: "id", value: "99999999999999999999", problem: "whole number from 1"},
		{name: "linked client id", method: http.MethodPut, target: "/sensors/s1/clients/x", field: "client", value: "x", problem: "whole number from 1"},
		{name: "unlinked client id", method: http.MethodDelete, target: "/sensors/s1/clients/0", field: "client", value: "0", problem: "whole number from 1"},
		{name: "sensor of a link", method: http.MethodPut, target: "/sensors/s_1/clients/1", field: "id", value: "s_1", problem: "only letters and digits"},
		{name: "notification id", method: http.MethodGet, target: "/notifications/x", field: "id", value: "x", problem: "whole number from 1"},
		{name: "replayed notification id", method: http.MethodPost, target: "/notifications/0/replay", field: "id", value: "0", problem: "whole number from 1"},
		{name: "limit 1001", method: http.MethodGet, target: "/clients?limit=1001", field: "limit", value: "1001", problem: "from 1 to 1000"},
		{name: "limit not a number", method: http.MethodGet, target: "/dead-letters?limit=ten", field: "limit", value: "ten", problem: "from 1 to 1000"},
		{name: "negative limit", method: http.MethodGet, target: "/notifications/dead?limit=-5", field: "limit", value: "-5", problem: "from 1 to 1000"},
		{name: "readings limit", method: http.MethodGet, target: "/sensors/s1/readings?limit=2000", field: "limit", value: "2000", problem: "from 1 to 1000"},
		{name: "negative notifications limit", method: http.MethodGet, target: "/sensors/s1/notifications?limit=-1", field: "limit", value: "-1", problem: "or 0 for 100"},
		{name: "sensors limit 1001", method: http.MethodGet, target: "/sensors?limit=1001", field: "limit", value: "1001", problem: "or 0 for 100"},
		{name: "sensors after", method: http.MethodGet, target: "/sensors?after=bad!", field: "after", value: "bad!", problem: "sensor id"},
		{name: "clients after", method: http.MethodGet, target: "/clients?after=x", field: "after", value: "x", problem: `"next" of the previous page`},
		{name: "dead notifications after", method: http.MethodGet, target: "/notifications/dead?after=-1", field: "after", value: "-1", problem: `"next" of the previous page`},
		{name: "dead letters after", method: http.MethodGet, target: "/dead-letters?after=1.5", field: "after", value: "1.5", problem: `"next" of the previous page`},
		{name: "from", method: http.MethodGet, target: "/sensors/s1/readings?from=yesterday", field: "from", value: "yesterday", problem: "RFC 3339"},
		{name: "from without a zone", method: http.MethodGet, target: "/sensors/s1/notifications?from=2026-03-02T09:00:00", field: "from", value: "2026-03-02T09:00:00", problem: "RFC 3339"},
		{name: "to", method: http.MethodGet, target: "/sensors/s1/notifications?to=2026-13-01T00:00:00Z", field: "to", value: "2026-13-01T00:00:00Z", problem: "RFC 3339"},
		{name: "from after to", method: http.MethodGet, target: "/sensors/s1/readings?from=2026-03-02T10:00:00Z&to=2026-03-02T09:00:00Z",
			field: "to", value: "2026-03-02T09:00:00Z", problem: "is before from"},
		{name: "cursor not base64", method: http.MethodGet, target: "/sensors/s1/readings?cursor=!!!", field: "cursor", value: "!!!", problem: `"next_cursor" of the previous page`},
		{name: "cursor of junk", method: http.MethodGet, target: "/sensors/s1/readings?cursor=" + cursor("hello"), field: "cursor", value: cursor("hello"), problem: "next_cursor"},
		{name: "cursor without an id", method: http.MethodGet, target: "/sensors/s1/notifications?cursor=" + cursor("1772442000000000000.0"), field: "cursor", problem: "next_cursor"},
		{name: "cursor with a bad time", method: http.MethodGet, target: "/sensors/s1/notifications?cursor=" + cursor("soon.3"), field: "cursor", problem: "next_cursor"},
		{name: "misspelt parameter", method: http.MethodGet, target: "/sensors?limt=5", field: "limt", value: "5", problem: "not a parameter of /sensors (it takes after, limit)"},
		{name: "after where cursor is meant", method: http.MethodGet, target: "/sensors/s1/readings?after=3", field: "after", value: "3", problem: "it takes from, to, limit, cursor"},
		{name: "repeated parameter", method: http.MethodGet, target: "/clients?limit=1&limit=2", field: "limit", value: "1,2", problem: "more than once"},
		{name: "malformed query", method: http.MethodGet, target: "/sensors?limit=%zz", problem: "query is malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newAPIFixture(t)
			f.sensor("s1")
			f.client("alpha")
			e := jsonapitest.DecodeError(t, f.do(tc.method, tc.target, tc.body), http.StatusBadRequest)
			if tc.field == "" {
				assert.Empty(t, e.Fields)
				assert.Contains(t, e.Error, tc.problem)
			} else {
				require.Len(t, e.Fields, 1, "error: %s", e.Error)
				assert.Equal(t, tc.field, e.Fields[0].Field)
				assert.Contains(t, e.Fields[0].Problem, tc.problem)
				if tc.value != "" {
					assert.Equal(t, tc.value, e.Fields[0].Value)
				}
				assert.Contains(t, e.Error, tc.field+": "+e.Fields[0].Problem)
			}

			// Nothing changed.
			sensors, err := f.store.ListSensors(t.Context(), "", 10)
			require.NoError(t, err)
			assert.Equal(t, []locks.Sensor{{ID: "s1", Address: "Moscow, Svobody st. 23, room s1"}}, sensors)
			clients, err := f.store.ListClients(t.Context(), 0, 10)
			require.NoError(t, err)
			assert.Equal(t, []locks.Client{{ID: 1, Name: "alpha", URL: "https://alpha.example.com/locks"}}, clients)
		})
	}
}

func TestAPINotFound(t *testing.T) {
	tests := []struct{ method, target, body, want string }{
		{http.MethodGet, "/", "", "no such resource: /"},
		{http.MethodGet, "/nope", "", "no such resource: /nope"},
		{http.MethodPost, "/nope", `{}`, "no such resource"},
		{http.MethodGet, "/sensors/", "", "no such resource"},
		{http.MethodGet, "/sensors/s1/history", "", "no such resource"},
		{http.MethodGet, "/notifications", "", "no such resource"},
		{http.MethodGet, "/stats", "", "no such resource: /stats"},
		{http.MethodGet, "/sensors/ghost", "", "ghost"},
		{http.MethodPut, "/sensors/ghost", `{"address":"x"}`, "ghost"},
		{http.MethodDelete, "/sensors/ghost", "", "ghost"},
		{http.MethodGet, "/sensors/ghost/state", "", "ghost"},
		{http.MethodGet, "/sensors/ghost/clients", "", "ghost"},
		{http.MethodGet, "/sensors/ghost/readings", "", "ghost"},
		{http.MethodGet, "/sensors/ghost/notifications", "", "ghost"},
		{http.MethodPut, "/sensors/ghost/clients/1", "", "ghost"},
		{http.MethodPut, "/sensors/s1/clients/42", "", "client 42"},
		{http.MethodDelete, "/sensors/s1/clients/1", "", "not found"},
		{http.MethodGet, "/clients/42", "", "client 42"},
		{http.MethodPut, "/clients/42", `{"name":"n","url":"https://example.com/"}`, "client 42"},
		{http.MethodDelete, "/clients/42", "", "client 42"},
		{http.MethodGet, "/notifications/42", "", "notification 42"},
		{http.MethodPost, "/notifications/42/replay", "", "notification 42"},
	}
	f := newAPIFixture(t)
	f.sensor("s1")
	f.client("alpha")
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			e := jsonapitest.DecodeError(t, f.do(tc.method, tc.target, tc.body), http.StatusNotFound)
			assert.Contains(t, e.Error, tc.want)
			assert.Empty(t, e.Fields)
		})
	}
}

func TestAPIMethodNotAllowed(t *testing.T) {
	tests := []struct{ method, target, allow string }{
		{http.MethodPost, "/health", "GET, HEAD"},
		{http.MethodDelete, "/sensors", "GET, HEAD, POST"},
		{http.MethodPatch, "/sensors/s1", "DELETE, GET, HEAD, PUT"},
		{http.MethodPost, "/sensors/s1", "DELETE, GET, HEAD, PUT"},
		{http.MethodPost, "/sensors/s1/state", "GET, HEAD"},
		{http.MethodPost, "/sensors/s1/clients", "GET, HEAD"},
		{http.MethodGet, "/sensors/s1/clients/1", "DELETE, PUT"},
		{http.MethodDelete, "/sensors/s1/readings", "GET, HEAD"},
		{http.MethodPost, "/sensors/s1/notifications", "GET, HEAD"},
		{http.MethodPut, "/clients", "GET, HEAD, POST"},
		{http.MethodPost, "/clients/1", "DELETE, GET, HEAD, PUT"},
		{http.MethodPost, "/notifications/dead", "GET, HEAD"},
		{http.MethodDelete, "/notifications/1", "GET, HEAD"},
		{http.MethodGet, "/notifications/1/replay", "POST"},
		{http.MethodPost, "/dead-letters", "GET, HEAD"},
	}
	f := newAPIFixture(t)
	f.sensor("s1")
	f.client("alpha")
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			rec := f.do(tc.method, tc.target, "")
			e := jsonapitest.DecodeError(t, rec, http.StatusMethodNotAllowed)
			assert.Equal(t, tc.allow, rec.Header().Get("Allow"))
			assert.Contains(t, e.Error, tc.method)
			assert.Contains(t, e.Error, tc.allow)
		})
	}
	_, err := f.store.GetSensor(t.Context(), "s1")
	require.NoError(t, err, "a refused DELETE deletes nothing")
}

func TestAPIRefusesCrossOriginChanges(t *testing.T) {
	f := newAPIFixture(t)
	f.sensor("s1")
	body := `{"id":"s2","address":"x"}`

	e := jsonapitest.DecodeError(t, f.do(http.MethodPost, "/sensors", body, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	assert.Contains(t, e.Error, "cross-origin")
	jsonapitest.DecodeError(t, f.do(http.MethodDelete, "/sensors/s1", "", "Origin", "https://evil.example"), http.StatusForbidden)
	jsonapitest.DecodeError(t, f.do(http.MethodPut, "/sensors/s1", body, "Sec-Fetch-Site", "same-site"), http.StatusForbidden)
	sensors, err := f.store.ListSensors(t.Context(), "", 10)
	require.NoError(t, err)
	assert.Len(t, sensors, 1, "nothing changed")

	// Reading is allowed from anywhere; changing, from the same origin and from clients
	// that are not browsers.
	assert.Equal(t, http.StatusOK, f.do(http.MethodGet, "/sensors", "", "Sec-Fetch-Site", "cross-site").Code)
	assert.Equal(t, http.StatusCreated, f.do(http.MethodPost, "/sensors", body, "Sec-Fetch-Site", "same-origin").Code)
	assert.Equal(t, http.StatusNoContent, f.do(http.MethodDelete, "/sensors/s2", "", "Origin", "http://example.com").Code)
	assert.Equal(t, http.StatusCreated, f.do(http.MethodPost, "/sensors", body).Code)
}

func TestAPILimitsBodies(t *testing.T) {
	f := newAPIFixture(t)

	rec := f.do(http.MethodPost, "/sensors", `{"id":"s1","address":"`+strings.Repeat("a", 65<<10)+`"}`)
	e := jsonapitest.DecodeError(t, rec, http.StatusRequestEntityTooLarge)
	assert.Contains(t, e.Error, "larger than 65536 bytes")

	rec = f.do(http.MethodPut, "/clients/1", `{"name":"n","url":"https://example.com/","x":"`+strings.Repeat("a", 1<<20)+`"}`)
	jsonapitest.DecodeError(t, rec, http.StatusRequestEntityTooLarge)

	// Past the limit only in trailing data: still too large, not "nothing after it".
	rec = f.do(http.MethodPost, "/sensors", `{"id":"s1","address":"x"}`+strings.Repeat(" ", 65<<10)+"{}")
	jsonapitest.DecodeError(t, rec, http.StatusRequestEntityTooLarge)

	// Within the limit, an address too long is the sensor's problem; the value is echoed
	// shortened.
	rec = f.do(http.MethodPost, "/sensors", `{"id":"s1","address":"`+strings.Repeat("a", 60<<10)+`"}`)
	e = jsonapitest.DecodeError(t, rec, http.StatusBadRequest)
	require.Len(t, e.Fields, 1)
	assert.Equal(t, "address", e.Fields[0].Field)
	assert.Contains(t, e.Fields[0].Problem, "longer than 500 characters")
	assert.Less(t, len(e.Fields[0].Value), 300)
	assert.True(t, strings.HasPrefix(e.Fields[0].Value, "aaaa"))

	sensors, err := f.store.ListSensors(t.Context(), "", 10)
	require.NoError(t, err)
	assert.Empty(t, sensors)
}

// apiBrokenStore is a Store whose reads of sensors fail as a database would.
type apiBrokenStore struct {
	*locks.MemoryStore
	err error
}

func (s apiBrokenStore) GetSensor(context.Context, locks.SensorID) (locks.Sensor, error) {
	return locks.Sensor{}, s.err
}

func TestAPIHidesServerErrors(t *testing.T) {
	var logged bytes.Buffer
	dbErr := errors.New("pgstore: dial tcp 10.0.0.5:5432: connect: connection refused")
	h := locks.NewHandler(apiBrokenStore{MemoryStore: locks.NewMemoryStore(0), err: dbErr}, locks.HandlerOptions{
		Logger: slog.New(slog.NewTextHandler(&logged, nil)),
		Stats:  func() any { return map[string]any{"broken": make(chan int)} },
	})

	e := jsonapitest.DecodeError(t, apiServe(t, h, http.MethodGet, "/sensors/s1", ""), http.StatusInternalServerError)
	assert.NotContains(t, e.Error, "10.0.0.5")
	assert.Contains(t, e.Error, "internal server error")
	assert.Contains(t, logged.String(), "10.0.0.5:5432")
	assert.Contains(t, logged.String(), "/sensors/s1")

	// A Stats value that is not JSON is a 500 too, not a truncated 200.
	logged.Reset()
	jsonapitest.DecodeError(t, apiServe(t, h, http.MethodGet, "/stats", ""), http.StatusInternalServerError)
	assert.Contains(t, logged.String(), "chan")

	// A Store too slow for the request's deadline is not a server bug.
	h = locks.NewHandler(apiBrokenStore{MemoryStore: locks.NewMemoryStore(0), err: fmt.Errorf("pgstore: %w", context.DeadlineExceeded)},
		locks.HandlerOptions{})
	e = jsonapitest.DecodeError(t, apiServe(t, h, http.MethodGet, "/sensors/s1", ""), http.StatusServiceUnavailable)
	assert.Contains(t, e.Error, "try again")
}
