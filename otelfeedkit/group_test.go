package otelfeedkit_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/internal/grouptest"
	"github.com/feedkit/feedkit/otelfeedkit"
)

// groupWatched is every instrument of NewGroup, each read from an ingress's or a
// worker's Stats.
var groupWatched = []string{
	"feedkit.group.ingress.active", "feedkit.group.ingress.activations", "feedkit.group.ingress.epoch",
	"feedkit.group.ingress.connected", "feedkit.group.ingress.reconnects", "feedkit.group.ingress.published",
	"feedkit.group.ingress.confirmed", "feedkit.group.ingress.unconfirmed", "feedkit.group.ingress.batches",
	"feedkit.group.ingress.batched_events", "feedkit.group.ingress.republished", "feedkit.group.ingress.returned",
	"feedkit.group.barriers", "feedkit.group.barriers.released", "feedkit.group.barriers.timed_out",
	"feedkit.group.barriers.cancelled", "feedkit.group.global_events.sent",
	"feedkit.group.worker.connected", "feedkit.group.worker.connects", "feedkit.group.worker.drops",
	"feedkit.group.worker.errors", "feedkit.group.worker.global_events", "feedkit.group.worker.global_events.dropped",
	"feedkit.group.shard.active", "feedkit.group.shard.deliveries", "feedkit.group.shard.redeliveries",
	"feedkit.group.shard.batches", "feedkit.group.shard.events", "feedkit.group.shard.processed",
	"feedkit.group.shard.abandoned", "feedkit.group.shard.events_in_flight", "feedkit.group.shard.acked",
	"feedkit.group.shard.invalid", "feedkit.group.shard.fenced", "feedkit.group.shard.barriers",
	"feedkit.group.shard.barriers.acked", "feedkit.group.shard.epoch",
}

// An ingress and a worker of two shards on RabbitMQ through a recovery and live
// traffic: each collected point lies between the Stats read just before the collection
// and just after, with the shard's attribute on the shards' points; a second watch is
// refused until the first is unregistered, which stops the reports.
func TestGroupMetricsFollowAnIngressAndAWorker(t *testing.T) {
	in, w := grouptest.Start(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	g, err := otelfeedkit.NewGroup(otelfeedkit.WithMeterProvider(mp))
	require.NoError(t, err)
	ri, err := g.WatchIngress(in)
	require.NoError(t, err)
	rw, err := g.WatchWorker(w)
	require.NoError(t, err)
	_, err = g.WatchWorker(w)
	assert.ErrorContains(t, err, "a worker is watched already")

	before, beforeW := in.Stats(), w.Stats()
	got := collect(t, reader)
	after, afterW := in.Stats(), w.Stats()
	assert.Len(t, got, len(groupWatched))

	between := func(name string, attrs []string, lo, hi int64) {
		t.Helper()
		for _, p := range points(got[name]) {
			if slices.Equal(attrs, p.attrs) {
				assert.True(t, float64(lo) <= p.value && p.value <= float64(hi), "%s%v = %v, not within [%d, %d]", name, attrs, p.value, lo, hi)
				return
			}
		}
		t.Errorf("no point of %s%v", name, attrs)
	}
	u := func(v uint64) int64 { return int64(v) }
	for name, c := range map[string][2]int64{
		"feedkit.group.ingress.active":               {1, 1},
		"feedkit.group.ingress.connected":            {1, 1},
		"feedkit.group.ingress.epoch":                {before.Epoch, after.Epoch},
		"feedkit.group.ingress.activations":          {u(before.Activations), u(after.Activations)},
		"feedkit.group.ingress.published":            {u(before.Published), u(after.Published)},
		"feedkit.group.ingress.confirmed":            {u(before.Confirmed), u(after.Confirmed)},
		"feedkit.group.ingress.unconfirmed":          {0, u(after.Published - before.Confirmed)},
		"feedkit.group.ingress.batches":              {u(before.Batches), u(after.Batches)},
		"feedkit.group.ingress.batched_events":       {u(before.Batched), u(after.Batched)},
		"feedkit.group.ingress.republished":          {u(before.Republished), u(after.Republished)},
		"feedkit.group.ingress.returned":             {u(before.Returned), u(after.Returned)},
		"feedkit.group.ingress.reconnects":           {u(before.Reconnects), u(after.Reconnects)},
		"feedkit.group.barriers":                     {u(before.Barriers.Barriers), u(after.Barriers.Barriers)},
		"feedkit.group.barriers.released":            {u(before.Barriers.Released), u(after.Barriers.Released)},
		"feedkit.group.barriers.timed_out":           {u(before.Barriers.TimedOut), u(after.Barriers.TimedOut)},
		"feedkit.group.barriers.cancelled":           {u(before.Barriers.Cancelled), u(after.Barriers.Cancelled)},
		"feedkit.group.global_events.sent":           {u(before.Barriers.Globals), u(after.Barriers.Globals)},
		"feedkit.group.worker.connected":             {1, 1},
		"feedkit.group.worker.connects":              {u(beforeW.Connects), u(afterW.Connects)},
		"feedkit.group.worker.drops":                 {u(beforeW.Drops), u(afterW.Drops)},
		"feedkit.group.worker.errors":                {u(beforeW.Errors), u(afterW.Errors)},
		"feedkit.group.worker.global_events":         {u(beforeW.Globals), u(afterW.Globals)},
		"feedkit.group.worker.global_events.dropped": {u(beforeW.BadGlobals), u(afterW.BadGlobals)},
	} {
		between(name, nil, c[0], c[1])
	}
	assert.GreaterOrEqual(t, before.Barriers.Released, uint64(1), "the recovery's up went through the barrier")
	for i, b := range beforeW.Shards {
		a, attrs := afterW.Shards[i], []string{"feedkit.shard=" + strconv.Itoa(b.Shard)}
		for name, c := range map[string][2]int64{
			"feedkit.group.shard.active":           {0, 1},
			"feedkit.group.shard.deliveries":       {u(b.Delivered), u(a.Delivered)},
			"feedkit.group.shard.redeliveries":     {u(b.Redelivered), u(a.Redelivered)},
			"feedkit.group.shard.batches":          {u(b.Batches), u(a.Batches)},
			"feedkit.group.shard.events":           {u(b.Events), u(a.Events)},
			"feedkit.group.shard.processed":        {u(b.Processed), u(a.Processed)},
			"feedkit.group.shard.abandoned":        {u(b.Abandoned), u(a.Abandoned)},
			"feedkit.group.shard.events_in_flight": {0, u(a.Events - b.Processed)},
			"feedkit.group.shard.acked":            {u(b.Acked), u(a.Acked)},
			"feedkit.group.shard.invalid":          {u(b.Invalid), u(a.Invalid)},
			"feedkit.group.shard.fenced":           {u(b.Fenced), u(a.Fenced)},
			"feedkit.group.shard.barriers":         {u(b.Barriers), u(a.Barriers)},
			"feedkit.group.shard.barriers.acked":   {u(b.BarriersAcked), u(a.BarriersAcked)},
			"feedkit.group.shard.epoch":            {b.Epoch, a.Epoch},
		} {
			between(name, attrs, c[0], c[1])
		}
		assert.NotZero(t, b.Processed, "shard %d processed events", b.Shard)
	}

	require.NoError(t, ri.Unregister())
	require.NoError(t, rw.Unregister())
	assert.Empty(t, collect(t, reader), "nothing is watched")
	_, err = g.WatchIngress(in)
	assert.NoError(t, err, "the first watch unregistered, another may start")
	_, err = g.WatchIngress((*group.Ingress)(nil))
	assert.ErrorContains(t, err, "the Ingress is nil")
}
