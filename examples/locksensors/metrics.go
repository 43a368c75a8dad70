package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/jsonapi"
)

// The metrics' label names: the OpenTelemetry attributes locks.outcome and locks.part,
// with the dots made underscores.
const (
	labelOutcome = "locks_outcome"
	labelPart    = "locks_part"
)

// attemptBuckets time an attempt to deliver a notification, a POST to the client: from a
// millisecond (a client next door) to 30 s (beyond locks.DefaultAttemptTimeout, for a
// longer NotifierConfig.AttemptTimeout).
var attemptBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// metrics keeps the service's metrics for Prometheus, on a registry of its own that
// GET /metrics serves. It is the locks.Observer of the Ingester, the Notifier and the
// Liveness, and reads the sensors the Liveness tracks at each scrape. Each counter sums
// what the Observer was told, as the parts' Stats do:
//
//   - locks_batches_total: the batches stored (IngestStats.Batches).
//   - locks_readings_total{locks_outcome}: "changed", "same" and "stale", the readings
//     stored (IngestStats.Changed, Same, Stale); "rejected", the messages put in the
//     dead letters (IngestStats.Rejected).
//   - locks_notifications_created_total: the notifications created, "changed" and
//     "restored" by the ingester (IngestStats.Notifications), "lost" by the Liveness.
//   - locks_notification_attempts_total{locks_outcome}: the attempts to deliver one,
//     "delivered", "failed" (a retry is due) and "dead" (the last failed)
//     (NotifierStats.Delivered, Failed, Dead).
//   - locks_notification_attempt_duration_seconds{locks_outcome}: how long they took, as
//     the Store records it (Attempt.Duration).
//   - locks_notifications_total{locks_outcome}: how notifications ended, "delivered",
//     "dead" and "cancelled" (their client was unlinked; NotifierStats.Cancelled); a dead
//     one replayed ends again.
//   - locks_sensors_lost_total: the losses recorded (LivenessStats.Lost).
//   - locks_sensors_restored_total: the lost sensors heard again (IngestStats.Restored).
//   - locks_liveness_false_alarms_total: the silences another process had heard the end
//     of (LivenessStats.FalseAlarms).
//   - locks_store_errors_total{locks_part}: the Store errors, each retried, of the
//     "ingester", the "notifier" and the "liveness" (IngestStats.StoreErrors,
//     NotifierStats.Errors, LivenessStats.Errors).
//   - locks_sensors_tracked: the sensors the liveness monitor follows
//     (LivenessStats.Tracked).
//
// A label's values are those listed, each series there from the start, at 0: no label
// names a sensor, a client or a notification.
type metrics struct {
	reg *prometheus.Registry

	batches, created             prometheus.Counter
	readings                     *prometheus.CounterVec
	changed, same, stale, reject prometheus.Counter // readings' series
	attempts, ended              *prometheus.CounterVec
	took                         *prometheus.HistogramVec
	lost, restored, falseAlarms  prometheus.Counter
	storeErrors                  *prometheus.CounterVec
}

var _ locks.Observer = (*metrics)(nil)

// newMetrics returns the service's metrics on a new registry; tracked returns the
// number of sensors the Liveness follows, read at each scrape.
func newMetrics(tracked func() int) (*metrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	counterVec := func(name, help, label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	m := &metrics{
		reg:     prometheus.NewRegistry(),
		batches: counter("locks_batches_total", "Batches of messages the ingester stored."),
		readings: counterVec("locks_readings_total",
			"Messages of the stored batches: the readings stored, by outcome (changed, same, stale), and the messages rejected to the dead letters.", labelOutcome),
		created: counter("locks_notifications_created_total",
			"Notifications created: changed and restored by the ingester, lost by the liveness monitor."),
		attempts: counterVec("locks_notification_attempts_total",
			"Attempts to deliver a notification, by outcome: delivered, failed (a retry is due) or dead (the last one failed).", labelOutcome),
		took: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "locks_notification_attempt_duration_seconds",
			Help: "Duration of the attempts to deliver a notification, by outcome.", Buckets: attemptBuckets}, []string{labelOutcome}),
		ended: counterVec("locks_notifications_total",
			"Notifications that ended, by how: delivered, dead (given up) or cancelled (their client was unlinked); a dead one replayed ends again.", labelOutcome),
		lost:     counter("locks_sensors_lost_total", "Silent sensors reported lost."),
		restored: counter("locks_sensors_restored_total", "Lost sensors heard again."),
		falseAlarms: counter("locks_liveness_false_alarms_total",
			"Silences the liveness monitor found that another process had heard the end of: no loss recorded."),
		storeErrors: counterVec("locks_store_errors_total",
			"Store errors, by the part of the service that met them; each is retried.", labelPart),
	}
	m.changed = m.readings.WithLabelValues("changed")
	m.same = m.readings.WithLabelValues("same")
	m.stale = m.readings.WithLabelValues("stale")
	m.reject = m.readings.WithLabelValues("rejected")
	for _, o := range []locks.AttemptOutcome{locks.AttemptDelivered, locks.AttemptFailed, locks.AttemptDead} {
		m.attempts.WithLabelValues(string(o))
		m.took.WithLabelValues(string(o))
	}
	for _, o := range []string{string(locks.AttemptDelivered), string(locks.AttemptDead), "cancelled"} {
		m.ended.WithLabelValues(o)
	}
	for _, p := range []locks.Part{locks.PartIngester, locks.PartNotifier, locks.PartLiveness} {
		m.storeErrors.WithLabelValues(string(p))
	}
	trackedGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "locks_sensors_tracked",
		Help: "Sensors the liveness monitor follows."}, func() float64 { return float64(tracked()) })
	for _, c := range []prometheus.Collector{m.batches, m.readings, m.created, m.attempts, m.took, m.ended,
		m.lost, m.restored, m.falseAlarms, m.storeErrors, trackedGauge} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return m, nil
}

// LockBatchStored implements locks.Observer.
func (m *metrics) LockBatchStored(b locks.BatchCounts) {
	m.batches.Inc()
	m.changed.Add(float64(b.Changed))
	m.same.Add(float64(b.Same))
	m.stale.Add(float64(b.Stale))
	m.reject.Add(float64(b.Rejected))
	m.restored.Add(float64(b.Restored))
	m.created.Add(float64(b.Notifications))
}

// LockNotificationAttempted implements locks.Observer.
func (m *metrics) LockNotificationAttempted(outcome locks.AttemptOutcome, took time.Duration) {
	o := string(outcome)
	m.attempts.WithLabelValues(o).Inc()
	m.took.WithLabelValues(o).Observe(took.Seconds())
	if outcome == locks.AttemptDelivered || outcome == locks.AttemptDead {
		m.ended.WithLabelValues(o).Inc()
	}
}

// LockNotificationCancelled implements locks.Observer.
func (m *metrics) LockNotificationCancelled() { m.ended.WithLabelValues("cancelled").Inc() }

// LockSensorLost implements locks.Observer.
func (m *metrics) LockSensorLost(notifications int) {
	m.lost.Inc()
	m.created.Add(float64(notifications))
}

// LockFalseAlarm implements locks.Observer.
func (m *metrics) LockFalseAlarm() { m.falseAlarms.Inc() }

// LockStoreFailed implements locks.Observer.
func (m *metrics) LockStoreFailed(part locks.Part) { m.storeErrors.WithLabelValues(string(part)).Inc() }

// withMetrics returns the handler the service serves: GET (and HEAD) /metrics, the
// metrics in Prometheus's text format, next to api for every other path. Another
// method on /metrics is a 405 in the API's JSON, with an Allow header.
func (m *metrics) withMetrics(api http.Handler) http.Handler {
	scrape := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			const allow = "GET, HEAD"
			w.Header().Set("Allow", allow)
			jsonapi.WriteError(w, &jsonapi.Error{Status: http.StatusMethodNotAllowed,
				Message: fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow)})
			return
		}
		scrape.ServeHTTP(w, r)
	})
	mux.Handle("/", api)
	return mux
}
