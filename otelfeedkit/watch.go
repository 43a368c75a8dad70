package otelfeedkit

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/feedkit/feedkit"
)

// WatchSDK reports the levels of sdk, read from sdk.Stats() once per collection: the
// pools' backlog and running calls, each producer's up and the age of its last alive,
// the names' caches' entries, and the RabbitMQ transport's links up and bytes
// received. What sdk lacks is not reported: the caches without the API, the transport
// with another than RabbitMQ (a feedtest.Broker), the running calls of a serial
// session, which its Stats do not count.
//
// A Metrics watches one SDK: a second WatchSDK is an error until the first's
// registration is unregistered, which stops the reports.
func (m *Metrics) WatchSDK(sdk *feedkit.SDK) (metric.Registration, error) {
	if sdk == nil {
		return nil, errors.New("otelfeedkit: WatchSDK: the SDK is nil")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watching {
		return nil, errors.New("otelfeedkit: WatchSDK: an SDK is watched already; a Metrics serves one SDK (unregister the first to watch another)")
	}
	w := &watcher{m: m, sdk: sdk}
	reg, err := m.meter.RegisterCallback(w.observe,
		m.backlog, m.running, m.up, m.aliveAge, m.entries, m.connected, m.received)
	if err != nil {
		return nil, fmt.Errorf("otelfeedkit: WatchSDK: %w", err)
	}
	m.watching = true
	return &registration{m: m, reg: reg}, nil
}

// watcher reads one SDK's Stats for the level instruments.
type watcher struct {
	m   *Metrics
	sdk *feedkit.SDK
}

// observe is the callback of a collection: one Stats, every level.
func (w *watcher) observe(_ context.Context, o metric.Observer) error {
	m, st := w.m, w.sdk.Stats()
	if st.Pool != nil {
		a := m.pool(m.cfg.pool)
		o.ObserveInt64(m.backlog, int64(st.Pool.Queued), a.observe...)
		o.ObserveInt64(m.running, int64(st.Pool.Running), a.observe...)
	}
	for i, d := range st.Delivery {
		if d.Serial != nil {
			// The SDK names a serial session's dispatcher so.
			o.ObserveInt64(m.backlog, int64(d.Serial.Queued), m.pool(fmt.Sprintf("session %d", i)).observe...)
		}
	}
	now := m.cfg.clock.Now()
	for _, p := range st.Producers {
		a := m.producer(p.Producer)
		up := int64(0)
		if p.Up {
			up = 1
		}
		o.ObserveInt64(m.up, up, a.observe...)
		if !p.LastAliveAt.IsZero() {
			o.ObserveFloat64(m.aliveAge, now.Sub(p.LastAliveAt).Seconds(), a.observe...)
		}
	}
	if n := st.Names; n != nil {
		// The names of markets.Stats' fields in JSON, as markets.Observer names the caches.
		for _, c := range []struct {
			name    string
			entries int
		}{
			{"markets", n.Markets.Entries},
			{"variants", n.Variants.Entries},
			{"single_variants", n.SingleVariants.Entries},
			{"summaries", n.Summaries.Entries},
			{"profiles", n.Profiles.Entries},
		} {
			o.ObserveInt64(m.entries, int64(c.entries), m.cache(c.name).observe...)
		}
	}
	if d := st.SportData; d != nil {
		// The names of sportdata.Stats' fields in JSON, as its Observer names the caches.
		for _, c := range []struct {
			name    string
			entries int
		}{
			{"event_summaries", d.Summaries.Entries},
			{"fixtures", d.Fixtures.Entries},
			{"competitor_profiles", d.Competitors.Entries},
			{"player_profiles", d.Players.Entries},
			{"sports", d.Sports.Entries},
			{"categories", d.Categories.Entries},
			{"tournaments", d.Tournaments.Entries},
			{"seasons", d.Seasons.Entries},
		} {
			o.ObserveInt64(m.entries, int64(c.entries), m.cache(c.name).observe...)
		}
	}
	if t := st.Transport; t != nil {
		o.ObserveInt64(m.connected, t.Connected)
		o.ObserveInt64(m.received, int64(t.Bytes))
	}
	return nil
}

// pool returns the attribute set of a pool alone.
func (m *Metrics) pool(name string) attrs {
	return m.poolAttrs.get(name, func() attrs { return newAttrs(keyPool.String(name)) })
}

// observeLastDown is the callback of feedkit.producer.last_down: 1 for each producer's
// last down reason. A reason replaced is no longer reported, and so leaves the export.
func (m *Metrics) observeLastDown(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, r := range m.downReasons {
		o.ObserveInt64(m.lastDown, 1, m.down(p, r).observe...)
	}
	return nil
}

// registration is WatchSDK's: unregistering it lets the Metrics watch another SDK.
type registration struct {
	embedded.Registration
	m    *Metrics
	reg  metric.Registration
	once sync.Once
}

// Unregister stops the reports of the watched SDK's levels.
func (r *registration) Unregister() error {
	var err error
	r.once.Do(func() {
		err = r.reg.Unregister()
		r.m.mu.Lock()
		r.m.watching = false
		r.m.mu.Unlock()
	})
	return err
}
