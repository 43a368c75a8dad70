package promfeedkit_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboardFile is the repository's Grafana dashboard, on the names this package
// exports.
const dashboardFile = "../grafana/feedkit.json"

// dashboardQueries returns the PromQL of every target of the dashboard's panels.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["expr"].(string); ok {
				out = append(out, e)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	require.NotEmpty(t, out, "the dashboard has no query")
	slices.Sort(out)
	return out
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promMatchers = regexp.MustCompile(`\{([^}]*)\}`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
)

// queryNames returns the metrics of the table that a PromQL query reads (a histogram's
// _bucket, _count and _sum series as the histogram), and the labels it names in its
// matchers and groupings. It errs on a name that is not the table's, and on a label
// that none of the query's metrics has.
func queryNames(expr string) (metrics []string, err error) {
	s := promString.ReplaceAllString(expr, `""`)
	var labels []string
	for _, m := range promMatchers.FindAllStringSubmatch(s, -1) {
		for _, matcher := range strings.Split(m[1], ",") {
			name, _, _ := strings.Cut(matcher, "=")
			if name = strings.TrimSpace(strings.TrimRight(name, "!~")); name != "" {
				labels = append(labels, name)
			}
		}
	}
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRange.ReplaceAllString(s, " ")
	for _, m := range promGrouping.FindAllStringSubmatch(s, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
	}
	s = promGrouping.ReplaceAllString(s, " ")
	known := map[string]bool{}
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		if strings.HasPrefix(strings.TrimLeft(s[loc[1]:], " "), "(") || promKeywords[name] {
			continue // a function or an operator
		}
		if loc[0] > 0 && (s[loc[0]-1] >= '0' && s[loc[0]-1] <= '9' || s[loc[0]-1] == '.') {
			continue // a number's exponent or unit, as in 1e3
		}
		metric := name
		if _, ok := exported[metric]; !ok {
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && exported[base].typ == histogram {
					metric = base
					if suffix == "_bucket" {
						known["le"] = true
					}
				}
			}
		}
		in, ok := exported[metric]
		if !ok {
			return nil, fmt.Errorf("%q reads %s, which promfeedkit does not export", expr, name)
		}
		for _, l := range in.labels {
			known[l] = true
		}
		if !slices.Contains(metrics, metric) {
			metrics = append(metrics, metric)
		}
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("%q reads no metric", expr)
	}
	for _, l := range labels {
		if !known[l] {
			return nil, fmt.Errorf("%q names label %s, which none of %v has", expr, l, metrics)
		}
	}
	return metrics, nil
}

func TestQueryNamesReadsPromQL(t *testing.T) {
	got, err := queryNames(`histogram_quantile(0.95, sum by (le, url_template) (rate(http_client_request_duration_seconds_bucket{http_request_method="GET"}[$__rate_interval])))`)
	require.NoError(t, err)
	assert.Equal(t, []string{"http_client_request_duration_seconds"}, got)
	got, err = queryNames(`sum by (feedkit_cache) (rate(feedkit_cache_reads_total{feedkit_result="hit"}[5m])) / sum by (feedkit_cache) (feedkit_cache_entries)`)
	require.NoError(t, err)
	assert.Equal(t, []string{"feedkit_cache_reads_total", "feedkit_cache_entries"}, got)
	got, err = queryNames(`feedkit_producer_up{} == bool 1`)
	require.NoError(t, err)
	assert.Equal(t, []string{"feedkit_producer_up"}, got)
	for expr, want := range map[string]string{
		`feedkit_producers_up`:                              "which promfeedkit does not export",
		`sum by (feedkit_pool) (feedkit_producer_up)`:       "names label feedkit_pool",
		`feedkit_producer_up{feedkit_reason="x"}`:           "names label feedkit_reason",
		`feedkit_producer_up{feedkit_reason!~"x"}`:          "names label feedkit_reason",
		`rate(feedkit_transport_connects_total_bucket[1m])`: "which promfeedkit does not export",
		`sum(rate(feedkit_listener_calls_total_count[1m]))`: "which promfeedkit does not export",
		`vector(1)`: "reads no metric",
	} {
		_, err := queryNames(expr)
		assert.ErrorContains(t, err, want, expr)
	}
}

// Every query of the Grafana dashboard reads metrics this package exports, by labels
// they have: a renamed metric or label shows here, not as an empty panel.
func TestDashboardQueriesReadExportedMetrics(t *testing.T) {
	for _, q := range dashboardQueries(t) {
		_, err := queryNames(q)
		assert.NoError(t, err)
	}
}

// Every metric of the table has a panel on the dashboard.
func TestDashboardShowsEveryMetric(t *testing.T) {
	shown := map[string]bool{}
	for _, q := range dashboardQueries(t) {
		metrics, err := queryNames(q)
		require.NoError(t, err)
		for _, m := range metrics {
			shown[m] = true
		}
	}
	for name := range exported {
		assert.True(t, shown[name], "no panel of %s reads %s", dashboardFile, name)
	}
}
