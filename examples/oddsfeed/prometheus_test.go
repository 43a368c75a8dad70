package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/internal/promserver"
)

// The outage of the run below: long enough for dozens of scrapes and probes to see it.
const promOutage = 5 * time.Second

// afterRecovery is how long the probes see the example ready again after the outage
// before the test ends the run: long enough for a dozen scrapes to see the producer up.
const afterRecovery = 3 * time.Second

// A real Prometheus server scrapes the example's /metrics through its outage, as an
// operator's would: the producer's feedkit_producer_up goes from 1 to 0 during the
// outage and back to 1 after the recovery. Meanwhile the test asks /readyz itself, as a
// Kubernetes readiness probe would: 200, then 503 during the outage, then 200 again.
//
// Both sides are held to what happens around the outage, not to a stopwatch: the story
// is driven by the feed's events, so it is the same on a slow machine, only later.
// Before the first up the producer is down, so the series may begin at 0 and /readyz at
// 503 (or at no answer, before the example listens); once the run ends, /readyz answers
// 503 (the SDK closed), then nothing. What is asserted is the outage in between: a
// stretch of 0 (of 503) lasting at least half the outage, with 1 (200) right before and
// right after it, seen by both at the same time.
//
// The run ends once the probes have seen the example ready for afterRecovery after the
// outage (the test interrupts it, as a first Ctrl-C would: what was sent is still
// accounted for), not at a -duration that a slow recovery could overrun: -duration only
// places the outage, a third of the way in, and bounds the run if the recovery never
// comes.
//
// The example listens on an address picked free a moment before the run (-http); the
// server is told it first, and has tried it once, so that it scrapes from the example's
// first moment.
func TestPrometheusSeesTheOutageAndTheRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example for about 20 s, after 5 s of Prometheus start: skipped with -short")
	}
	addr := promserver.FreeLoopbackAddr(t)
	srv := promserver.Start(t, promserver.Options{Targets: []string{addr}, ScrapeInterval: 200 * time.Millisecond})

	start := time.Now()
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	runDone := make(chan struct{})
	probes := make(chan []probe, 1)
	go func() { probes <- probeReadiness("http://"+addr+"/readyz", interrupt, runDone) }()
	var out bytes.Buffer
	// The outage begins 10 s in, once the producer is up, and ends once it has lasted
	// 5 s and the producer was found down; the recovery of a feed this slow takes well
	// under a second, and the run has 15 s more before -duration.
	err := run(ctx, []string{"-http", addr, "-duration", "30s", "-outage", promOutage.String(),
		"-progress", "1s", "-matches", "10", "-rate", "500"}, &out)
	close(runDone)
	readyz := <-probes
	end := time.Now()
	require.NoError(t, err, out.String())
	text := out.String()
	assert.Contains(t, text, "\n  http       probes, metrics and counters on http://"+addr+" ")
	assertNothingLost(t, text)

	// /readyz, as the test saw it.
	probed := stretches(statusesOf(readyz))
	t.Logf("/readyz, %d probes: %s", len(readyz), probed)
	i := outageStretch(probed, "200", "503")
	require.GreaterOrEqual(t, i, 0, "no 503 of at least %v between two 200s in the probes %s\n%s", promOutage/2, probed, text)
	outageProbed := probed[i]
	assert.True(t, namesFailing(readyz, outageProbed, "producer 1"),
		"the outage's 503s name producer 1 as not ready: %+v", readyz)

	// The producer's series, as the server scraped it: every 100 ms over the whole run,
	// to a second after its end (the last scrapes may be younger than a step).
	series, err := srv.QueryRange(`feedkit_producer_up{job="feedkit"}`, start, end.Add(time.Second), 100*time.Millisecond)
	require.NoError(t, err)
	require.Len(t, series, 1, "one producer, one series: %+v", series)
	assert.Equal(t, "1", series[0].Metric["feedkit_producer"])
	points := make([]observation, len(series[0].Points))
	for i, p := range series[0].Points {
		points[i] = observation{at: p.Time, value: p.Value}
	}
	scraped := stretches(points)
	t.Logf("feedkit_producer_up, %d points: %s", len(points), scraped)
	require.NotEmpty(t, scraped)
	assert.Contains(t, []string{"0", "1"}, scraped[0].value, "the series begins down, before the first up, or up")
	j := outageStretch(scraped, "1", "0")
	require.GreaterOrEqual(t, j, 0, "no 0 of at least %v between two 1s in the series %s\n%s", promOutage/2, scraped, text)
	outageScraped := scraped[j]

	assert.True(t, outageScraped.from.Before(outageProbed.to) && outageProbed.from.Before(outageScraped.to),
		"the server and the probes saw the same outage: %s and %s", outageScraped, outageProbed)
}

// probe is an answer of /readyz: its status (0 when the request failed, as when the
// example does not listen yet or any more) and the checks it says fail.
type probe struct {
	at      time.Time
	status  int
	failing []string
}

// probeReadiness asks url every 50 ms, as a readiness probe would, until done is closed,
// and returns the answers in order. Once they show the outage and afterRecovery of
// readiness after it, it calls recovered. (The example has no signal for "ready": it
// is asked.)
func probeReadiness(url string, recovered func(), done <-chan struct{}) []probe {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var probes []probe
	for {
		p := probe{}
		resp, err := client.Get(url)
		if err == nil {
			p.status = resp.StatusCode
			var h feedkit.Health
			if json.NewDecoder(resp.Body).Decode(&h) == nil {
				for _, c := range h.Checks {
					if !c.OK {
						p.failing = append(p.failing, c.Name)
					}
				}
			}
			_ = resp.Body.Close()
		}
		p.at = time.Now()
		probes = append(probes, p)
		st := stretches(statusesOf(probes))
		if i := outageStretch(st, "200", "503"); i >= 0 && st[i+1].to.Sub(st[i+1].from) >= afterRecovery {
			recovered() // again at each probe after: a context's cancel does nothing twice
		}
		select {
		case <-done:
			return probes
		case <-tick.C:
		}
	}
}

// statusesOf returns the probes' statuses.
func statusesOf(probes []probe) []observation {
	obs := make([]observation, len(probes))
	for i, p := range probes {
		obs[i] = observation{at: p.at, value: fmt.Sprint(p.status)}
	}
	return obs
}

// namesFailing reports whether a probe within s names check as failing.
func namesFailing(probes []probe, s stretch, check string) bool {
	for _, p := range probes {
		if !p.at.Before(s.from) && !p.at.After(s.to) && strings.Contains(strings.Join(p.failing, "\n"), check) {
			return true
		}
	}
	return false
}

// observation is a value seen at a time: a probe's status, or a point of a series.
type observation struct {
	at    time.Time
	value string
}

// stretch is a run of observations of the same value, from the first to the last.
type stretch struct {
	value    string
	from, to time.Time
	n        int
}

func (s stretch) String() string {
	return fmt.Sprintf("%s×%d (%.1fs)", s.value, s.n, s.to.Sub(s.from).Seconds())
}

// stretches collapses the observations, in order, into runs of the same value.
func stretches(obs []observation) []stretch {
	var st []stretch
	for _, o := range obs {
		if n := len(st); n > 0 && st[n-1].value == o.value {
			st[n-1].to = o.at
			st[n-1].n++
			continue
		}
		st = append(st, stretch{value: o.value, from: o.at, to: o.at, n: 1})
	}
	return st
}

// outageStretch returns the index of the outage in st: a stretch of down lasting at least
// half the outage, right after a stretch of up and right before another; -1 if there is
// none. Its length tells it from a blip of a busy machine, its neighbours from the
// producer down before the first up and after the feed stops.
func outageStretch(st []stretch, up, down string) int {
	for i := 1; i+1 < len(st); i++ {
		if st[i].value == down && st[i-1].value == up && st[i+1].value == up && st[i].to.Sub(st[i].from) >= promOutage/2 {
			return i
		}
	}
	return -1
}
