//go:build crash

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/crashtest"
)

// crashHookLatency bounds the time a client takes over a notification before it is
// recorded and answered, drawn at random for each: a client over a network, not one on
// loopback that answers in microseconds. Attempts are then under way at every moment
// (tens of them at the load's rate), so that a kill cuts some short, and those of one
// sensor may arrive out of the order they were sent in.
const crashHookLatency = 60 * time.Millisecond

// crashHook is a client's endpoint in the crash test's parent: it accepts every
// notification, after a random latency, and records every request that carried one whole, by Idempotency-Key,
// in the order they came, and keeps what the receiver's rule (locks.Latest) keeps. The
// record is the parent's, so no kill of a service touches it.
type crashHook struct {
	name   string
	url    string
	client locks.ClientID
	linked map[locks.SensorID]bool // set before any reading is published

	mu       sync.Mutex
	receipts map[string][][]byte // the bodies received, by Idempotency-Key
	latest   locks.Latest
	late     int      // first receipts the rule dropped: older news than what was kept
	torn     int      // requests cut off before their body was whole (a kill mid-request)
	bad      []string // whole requests that were not a notification
}

func startCrashHook(t *testing.T, name string) *crashHook {
	h := &crashHook{name: name, linked: map[locks.SensorID]bool{}, receipts: map[string][][]byte{}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/notify/" + name
	return h
}

func (h *crashHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	if err != nil {
		h.mu.Lock()
		h.torn++
		h.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// It shapes the load; nothing is waited for. A notifier killed meanwhile does not
	// undo what arrived whole: it is recorded all the same.
	_ = crashtest.Pause(r.Context(), rand.N(crashHookLatency))
	var b locks.Body
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	err = d.Decode(&b)
	key := r.Header.Get(locks.IdempotencyKeyHeader)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil || key == "" {
		h.bad = append(h.bad, key+" "+string(body))
		http.Error(w, "not a notification", http.StatusBadRequest)
		return
	}
	first := len(h.receipts[key]) == 0
	h.receipts[key] = append(h.receipts[key], body)
	if first && !h.latest.Keep(b) {
		h.late++
	}
}
