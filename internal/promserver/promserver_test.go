package promserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lookupFrom(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

// lookPathIn is an exec.LookPath that finds only the programs in found, by name.
func lookPathIn(found map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		if p, ok := found[name]; ok {
			return p, nil
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
}

func TestFindTool(t *testing.T) {
	onPath := map[string]string{"prometheus": "/usr/bin/prometheus"}
	tests := []struct {
		name     string
		env      map[string]string
		found    map[string]string
		wantPath string
		want     verdict
		inMsg    string
	}{
		{"on PATH", nil, onPath, "/usr/bin/prometheus", use, ""},
		{"on PATH under CI", map[string]string{CIVar: "true"}, onPath, "/usr/bin/prometheus", use, ""},
		{"missing", nil, nil, "", skip, "Debian's prometheus package"},
		{"missing, CI not true", map[string]string{CIVar: "1"}, nil, "", skip, PrometheusVar},
		{"missing under CI", map[string]string{CIVar: "true"}, nil, "", fail, "under CI=true this test may not skip"},
		{"variable names it", map[string]string{PrometheusVar: " /opt/prom/prometheus "},
			map[string]string{"/opt/prom/prometheus": "/opt/prom/prometheus"}, "/opt/prom/prometheus", use, ""},
		{"variable blank", map[string]string{PrometheusVar: " "}, onPath, "/usr/bin/prometheus", use, ""},
		{"variable names nothing", map[string]string{PrometheusVar: "/nope/prometheus"}, onPath, "", fail, PrometheusVar + "=/nope/prometheus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, v, msg := findTool(PrometheusVar, "prometheus", lookupFrom(tt.env), lookPathIn(tt.found))
			assert.Equal(t, tt.wantPath, path)
			assert.Equal(t, tt.want, v)
			if tt.want == use {
				assert.Empty(t, msg)
			} else {
				assert.Contains(t, msg, tt.inMsg)
			}
		})
	}
}

func TestConfigText(t *testing.T) {
	assert.Equal(t, "global:\n  scrape_interval: 1000ms\nscrape_configs:\n  - job_name: \"feedkit\"\n    static_configs:\n      - targets: [\"127.0.0.1:1\"]\n",
		configText(Options{Targets: []string{"127.0.0.1:1"}}))
	assert.Equal(t, "global:\n  scrape_interval: 200ms\nscrape_configs:\n  - job_name: \"demo\"\n    static_configs:\n      - targets: [\"a:1\", \"b:2\"]\n",
		configText(Options{Targets: []string{"a:1", "b:2"}, Job: "demo", ScrapeInterval: 200 * time.Millisecond}))
}

func TestPointsAndSamplesDecode(t *testing.T) {
	var s []Sample
	require.NoError(t, json.Unmarshal([]byte(`[{"metric":{"__name__":"up","job":"x"},"value":[1700000000.123,"1"]}]`), &s))
	require.Len(t, s, 1)
	assert.Equal(t, map[string]string{"__name__": "up", "job": "x"}, s[0].Metric)
	assert.Equal(t, "1", s[0].Value)
	assert.Equal(t, time.UnixMilli(1700000000123), s[0].Time)

	var m []Series
	require.NoError(t, json.Unmarshal([]byte(`[{"metric":{"job":"x"},"values":[[1700000000,"0"],[1700000000.5,"NaN"]]}]`), &m))
	require.Len(t, m, 1)
	assert.Equal(t, []Point{{time.UnixMilli(1700000000000), "0"}, {time.UnixMilli(1700000000500), "NaN"}}, m[0].Points)

	var p Point
	assert.Error(t, json.Unmarshal([]byte(`["x","1"]`), &p))
	assert.Error(t, json.Unmarshal([]byte(`[1,1]`), &p))
	assert.Equal(t, "1700000000.123", formatTime(time.UnixMilli(1700000000123)))
}

// A real server scrapes a target and answers instant and range queries on what it
// scraped; a bad query is an error, not an empty answer.
func TestServerScrapesAndAnswers(t *testing.T) {
	var value atomic.Int64
	value.Store(1)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE promserver_test_value gauge\npromserver_test_value %d\n", value.Load())
	}))
	t.Cleanup(target.Close)
	start := time.Now()
	// A target that does not listen (yet) is scraped too, and is down.
	dead := FreeLoopbackAddr(t)
	srv := Start(t, Options{Targets: []string{target.Listener.Addr().String(), dead}, Job: "promserver", ScrapeInterval: 200 * time.Millisecond})
	got, err := srv.Query(`up{job="promserver"} == 0`)
	require.NoError(t, err, "Start returns once each target was tried")
	require.Len(t, got, 1)
	assert.Equal(t, dead, got[0].Metric["instance"])

	srv.WaitFor(`promserver_test_value{job="promserver"} == 1`, time.Minute)
	value.Store(2)
	got = srv.WaitFor(`promserver_test_value{job="promserver"} == 2`, time.Minute)
	require.Len(t, got, 1)
	assert.Equal(t, "2", got[0].Value)
	assert.Equal(t, target.Listener.Addr().String(), got[0].Metric["instance"])
	assert.WithinRange(t, got[0].Time, start, time.Now())

	got, err = srv.Query(`up{job="promserver", instance="` + target.Listener.Addr().String() + `"}`)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "1", got[0].Value, "the scrapes of the live target succeed")

	// To a second from now: the last 2 may have been scraped less than a step ago.
	series, err := srv.QueryRange(`promserver_test_value`, start, time.Now().Add(time.Second), 100*time.Millisecond)
	require.NoError(t, err)
	require.Len(t, series, 1)
	var values []string
	for _, p := range series[0].Points {
		if len(values) == 0 || values[len(values)-1] != p.Value {
			values = append(values, p.Value)
		}
	}
	assert.Equal(t, []string{"1", "2"}, values)

	_, err = srv.Query(`sum(`)
	assert.ErrorContains(t, err, "bad_data")
	_, err = srv.Query(`1`)
	assert.ErrorContains(t, err, "a scalar, not a vector")
}
