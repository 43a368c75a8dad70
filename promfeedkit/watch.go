package promfeedkit

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit"
)

// WatchSDK makes each scrape read sdk.Stats, once, for the levels: feedkit_pool_backlog
// and feedkit_pool_running, feedkit_producer_up and feedkit_producer_alive_age_seconds,
// feedkit_cache_entries, feedkit_transport_connected and
// feedkit_transport_received_bytes_total. Call it once the SDK is built; the metrics
// were registered by New, and a scrape before WatchSDK has none of these levels.
//
// A level the SDK does not have is left out: the pool's without Config.Concurrent (a
// serial session has its backlog, labelled "session N" as its listener calls are, but
// no running count), the caches' without the API, the transport's on another transport
// than RabbitMQ (feedtest.Broker). feedkit_producer_last_down does not come from the
// Stats but from ProducerStatusChanged, and is there without WatchSDK.
//
// A Metrics watches one SDK: a second call fails, whatever its SDK.
func (m *Metrics) WatchSDK(sdk *feedkit.SDK) error {
	if sdk == nil {
		return errors.New("promfeedkit: WatchSDK: the SDK is nil")
	}
	if !m.sdk.CompareAndSwap(nil, sdk) {
		return errors.New("promfeedkit: WatchSDK: this Metrics already watches an SDK; for another SDK, make another Metrics (on a registry of its own, or on one wrapped with prometheus.WrapRegistererWith and a label telling the SDKs apart)")
	}
	return nil
}

// collectLevels sends the levels: the last downs, and what WatchSDK's SDK's Stats say.
func (m *Metrics) collectLevels(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	for p, r := range m.lastDown {
		ch <- prometheus.MustNewConstMetric(m.lastDownDesc, prometheus.GaugeValue, 1, strconv.Itoa(p), r.String())
	}
	m.mu.Unlock()

	sdk := m.sdk.Load()
	if sdk == nil {
		return
	}
	st := sdk.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if st.Pool != nil {
		gauge(m.backlogDesc, float64(st.Pool.Queued), m.poolName)
		gauge(m.runningDesc, float64(st.Pool.Running), m.poolName)
	}
	for i, d := range st.Delivery {
		if d.Serial != nil {
			// The name the SDK gives a serial session's dispatcher (concurrent.SerialConfig.Name).
			gauge(m.backlogDesc, float64(d.Serial.Queued), "session "+strconv.Itoa(i))
		}
	}
	now := m.clock.Now()
	for _, p := range st.Producers {
		id := strconv.Itoa(p.Producer)
		up := 0.0
		if p.Up {
			up = 1
		}
		gauge(m.upDesc, up, id)
		if !p.LastAliveAt.IsZero() {
			gauge(m.aliveAgeDesc, now.Sub(p.LastAliveAt).Seconds(), id)
		}
	}
	if n := st.Names; n != nil {
		// The caches' names are those of markets.Stats' fields in JSON, as CacheRead has them.
		gauge(m.entriesDesc, float64(n.Markets.Entries), "markets")
		gauge(m.entriesDesc, float64(n.Variants.Entries), "variants")
		gauge(m.entriesDesc, float64(n.SingleVariants.Entries), "single_variants")
		gauge(m.entriesDesc, float64(n.Summaries.Entries), "summaries")
		gauge(m.entriesDesc, float64(n.Profiles.Entries), "profiles")
	}
	if d := st.SportData; d != nil {
		// The names of sportdata.Stats' fields in JSON, as its Observer names the caches.
		gauge(m.entriesDesc, float64(d.Summaries.Entries), "event_summaries")
		gauge(m.entriesDesc, float64(d.Fixtures.Entries), "fixtures")
		gauge(m.entriesDesc, float64(d.Competitors.Entries), "competitor_profiles")
		gauge(m.entriesDesc, float64(d.Players.Entries), "player_profiles")
		gauge(m.entriesDesc, float64(d.Sports.Entries), "sports")
		gauge(m.entriesDesc, float64(d.Categories.Entries), "categories")
		gauge(m.entriesDesc, float64(d.Tournaments.Entries), "tournaments")
		gauge(m.entriesDesc, float64(d.Seasons.Entries), "seasons")
	}
	if t := st.Transport; t != nil {
		gauge(m.connectedDesc, float64(t.Connected))
		ch <- prometheus.MustNewConstMetric(m.receivedDesc, prometheus.CounterValue, float64(t.Bytes))
	}
}
