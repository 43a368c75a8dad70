package promfeedkit_test

import (
	"bytes"
	"maps"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/internal/grouptest"
	"github.com/feedkit/feedkit/promfeedkit"
)

// groupTable is the metrics of NewGroup, as its doc names them.
var groupTable = map[string]instrument{
	"feedkit_group_ingress_active":                     {gauge, nil},
	"feedkit_group_ingress_activations_total":          {counter, nil},
	"feedkit_group_ingress_epoch":                      {gauge, nil},
	"feedkit_group_ingress_connected":                  {gauge, nil},
	"feedkit_group_ingress_reconnects_total":           {counter, nil},
	"feedkit_group_ingress_published_total":            {counter, nil},
	"feedkit_group_ingress_confirmed_total":            {counter, nil},
	"feedkit_group_ingress_unconfirmed":                {gauge, nil},
	"feedkit_group_ingress_batches_total":              {counter, nil},
	"feedkit_group_ingress_batched_events_total":       {counter, nil},
	"feedkit_group_ingress_republished_total":          {counter, nil},
	"feedkit_group_ingress_returned_total":             {counter, nil},
	"feedkit_group_barriers_total":                     {counter, nil},
	"feedkit_group_barriers_released_total":            {counter, nil},
	"feedkit_group_barriers_timed_out_total":           {counter, nil},
	"feedkit_group_barriers_cancelled_total":           {counter, nil},
	"feedkit_group_global_events_sent_total":           {counter, nil},
	"feedkit_group_worker_connected":                   {gauge, nil},
	"feedkit_group_worker_connects_total":              {counter, nil},
	"feedkit_group_worker_drops_total":                 {counter, nil},
	"feedkit_group_worker_errors_total":                {counter, nil},
	"feedkit_group_worker_global_events_total":         {counter, nil},
	"feedkit_group_worker_global_events_dropped_total": {counter, nil},
	"feedkit_group_shard_active":                       {gauge, []string{"feedkit_shard"}},
	"feedkit_group_shard_deliveries_total":             {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_redeliveries_total":           {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_batches_total":                {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_events_total":                 {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_processed_total":              {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_abandoned_total":              {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_events_in_flight":             {gauge, []string{"feedkit_shard"}},
	"feedkit_group_shard_acked_total":                  {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_invalid_total":                {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_fenced_total":                 {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_barriers_total":               {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_barriers_acked_total":         {counter, []string{"feedkit_shard"}},
	"feedkit_group_shard_epoch":                        {gauge, []string{"feedkit_shard"}},
}

// runGroup runs a group (grouptest.Start) watched by a GroupMetrics registered with reg.
func runGroup(t *testing.T, reg prometheus.Registerer) (*group.Ingress, *group.Worker) {
	t.Helper()
	in, w := grouptest.Start(t)
	m, err := promfeedkit.NewGroup(reg)
	require.NoError(t, err)
	require.NoError(t, m.WatchIngress(in))
	require.NoError(t, m.WatchWorker(w))
	assert.ErrorContains(t, m.WatchWorker(w), "already watches a worker")
	return in, w
}

// An ingress and a worker of two shards on RabbitMQ through a recovery and live
// traffic: every series of the scrape lies between the Stats read just before it and
// just after (a counter's value, a gauge's where it can move), and is exactly the Stats'
// where it cannot; the scrape passes promtool.
func TestGroupMetricsFollowAnIngressAndAWorker(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	in, w := runGroup(t, reg)
	before, beforeW := in.Stats(), w.Stats()
	families, err := reg.Gather()
	require.NoError(t, err)
	after, afterW := in.Stats(), w.Stats()
	checkFamilies(t, families)

	got := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			got[f.GetName()+shardLabel(mt)] = value(mt)
		}
	}
	perShard := 0
	for _, in := range groupTable {
		if len(in.labels) > 0 {
			perShard++
		}
	}
	assert.Len(t, got, len(groupTable)-perShard+perShard*len(beforeW.Shards), "a series per metric, per shard for the shards'")
	between := func(name string, lo, hi float64) {
		t.Helper()
		v, ok := got[name]
		if assert.True(t, ok, "no series %s", name) {
			assert.True(t, lo <= v && v <= hi, "%s = %v, not within [%v, %v]", name, v, lo, hi)
		}
	}
	for _, c := range []struct {
		name   string
		lo, hi uint64
	}{
		{"feedkit_group_ingress_activations_total", before.Activations, after.Activations},
		{"feedkit_group_ingress_published_total", before.Published, after.Published},
		{"feedkit_group_ingress_confirmed_total", before.Confirmed, after.Confirmed},
		{"feedkit_group_ingress_batches_total", before.Batches, after.Batches},
		{"feedkit_group_ingress_batched_events_total", before.Batched, after.Batched},
		{"feedkit_group_ingress_republished_total", before.Republished, after.Republished},
		{"feedkit_group_ingress_returned_total", before.Returned, after.Returned},
		{"feedkit_group_ingress_reconnects_total", before.Reconnects, after.Reconnects},
		{"feedkit_group_barriers_total", before.Barriers.Barriers, after.Barriers.Barriers},
		{"feedkit_group_barriers_released_total", before.Barriers.Released, after.Barriers.Released},
		{"feedkit_group_barriers_timed_out_total", before.Barriers.TimedOut, after.Barriers.TimedOut},
		{"feedkit_group_barriers_cancelled_total", before.Barriers.Cancelled, after.Barriers.Cancelled},
		{"feedkit_group_global_events_sent_total", before.Barriers.Globals, after.Barriers.Globals},
		{"feedkit_group_worker_connects_total", beforeW.Connects, afterW.Connects},
		{"feedkit_group_worker_drops_total", beforeW.Drops, afterW.Drops},
		{"feedkit_group_worker_errors_total", beforeW.Errors, afterW.Errors},
		{"feedkit_group_worker_global_events_total", beforeW.Globals, afterW.Globals},
		{"feedkit_group_worker_global_events_dropped_total", beforeW.BadGlobals, afterW.BadGlobals},
	} {
		between(c.name, float64(c.lo), float64(c.hi))
	}
	between("feedkit_group_ingress_active", 1, 1)
	between("feedkit_group_ingress_connected", 1, 1)
	between("feedkit_group_ingress_epoch", float64(before.Epoch), float64(before.Epoch))
	between("feedkit_group_ingress_unconfirmed", 0, float64(after.Published-before.Confirmed))
	between("feedkit_group_worker_connected", 1, 1)
	assert.GreaterOrEqual(t, before.Barriers.Released, uint64(1), "the recovery's up went through the barrier")
	for i, b := range beforeW.Shards {
		a, n := afterW.Shards[i], "{"+strconv.Itoa(b.Shard)+"}"
		for _, c := range []struct {
			name   string
			lo, hi uint64
		}{
			{"feedkit_group_shard_deliveries_total", b.Delivered, a.Delivered},
			{"feedkit_group_shard_redeliveries_total", b.Redelivered, a.Redelivered},
			{"feedkit_group_shard_batches_total", b.Batches, a.Batches},
			{"feedkit_group_shard_events_total", b.Events, a.Events},
			{"feedkit_group_shard_processed_total", b.Processed, a.Processed},
			{"feedkit_group_shard_abandoned_total", b.Abandoned, a.Abandoned},
			{"feedkit_group_shard_acked_total", b.Acked, a.Acked},
			{"feedkit_group_shard_invalid_total", b.Invalid, a.Invalid},
			{"feedkit_group_shard_fenced_total", b.Fenced, a.Fenced},
			{"feedkit_group_shard_barriers_total", b.Barriers, a.Barriers},
			{"feedkit_group_shard_barriers_acked_total", b.BarriersAcked, a.BarriersAcked},
		} {
			between(c.name+n, float64(c.lo), float64(c.hi))
		}
		between("feedkit_group_shard_epoch"+n, float64(b.Epoch), float64(a.Epoch))
		between("feedkit_group_shard_events_in_flight"+n, 0, float64(a.Events-b.Processed))
		between("feedkit_group_shard_active"+n, 0, 1)
		assert.NotZero(t, b.Processed, "shard %d processed events", b.Shard)
	}

	promtool := findTool(t, "FEEDKIT_PROMTOOL", "promtool")
	body := scrape(t, reg)
	for name := range maps.Keys(groupTable) {
		assert.Contains(t, string(body), "\n# TYPE "+name+" ", "the scrape has no %s", name)
	}
	cmd := exec.CommandContext(t.Context(), promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "promtool check metrics:\n%s\non the scrape:\n%s", out, body)
	assert.Empty(t, strings.TrimSpace(string(out)), "promtool's findings")
}

// shardLabel is "{n}" for a series of shard n, "" for one without the label.
func shardLabel(m *dto.Metric) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == "feedkit_shard" {
			return "{" + l.GetValue() + "}"
		}
	}
	return ""
}

// value is a counter's or a gauge's value.
func value(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
