package main

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel/carouselhttp"
)

// The notifier tells a republication in the same iteration from a retry of one request
// and from the next round, by the identity headers, and refuses a request without them.
func TestNotifierCountsRepublicationsByIdentity(t *testing.T) {
	n := newNotifier()
	send := func(cycle, iteration, position, requestID, id string) int {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/notify", strings.NewReader(`{"collection":"articles","id":"`+id+`"}`))
		r.Header.Set("X-Origin-System-Id", "cms")
		for h, v := range map[string]string{carouselhttp.CycleHeader: cycle, carouselhttp.IterationHeader: iteration,
			carouselhttp.PositionHeader: position, carouselhttp.RequestIDHeader: requestID} {
			if v != "" {
				r.Header.Set(h, v)
			}
		}
		w := httptest.NewRecorder()
		n.ServeHTTP(w, r)
		return w.Code
	}
	accepted := []struct{ cycle, iteration, position, requestID, id string }{
		{"whole", "1", "1", "r1", "a"},
		{"whole", "1", "2", "r2", "b"},
		{"whole", "1", "2", "r2", "b"},  // a retry of the same request
		{"whole", "1", "2", "r3", "b"},  // again in iteration 1: republished after a restart
		{"whole", "2", "1", "r4", "a"},  // the next round
		{"window", "1", "1", "r5", "a"}, // another cycle
	}
	for i, p := range accepted {
		require.Equal(t, http.StatusAccepted, send(p.cycle, p.iteration, p.position, p.requestID, p.id), "request %d", i)
	}
	for i, p := range []struct{ cycle, iteration, position string }{
		{"", "1", "1"}, {"whole", "", "1"}, {"whole", "1", ""}, {"whole", "0", "1"}, {"whole", "1", "x"},
	} {
		assert.Equal(t, http.StatusBadRequest, send(p.cycle, p.iteration, p.position, "r"+strconv.Itoa(i), "c"), "bad %d", i)
	}
	got := n.counts()
	assert.Equal(t, receipt{total: 6, distinct: 2, repeated: 1, bad: 5, byOrigin: map[string]int{"cms": 6}}, got)
}
