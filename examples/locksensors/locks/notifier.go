package locks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// Defaults of NotifierConfig.
const (
	DefaultMaxAttempts    = 10
	DefaultAttemptTimeout = 10 * time.Second
	DefaultWorkers        = 16
	DefaultPollInterval   = time.Second
)

// IdempotencyKeyHeader carries a notification's ID in every attempt to deliver it, so
// that a client that got an attempt whose answer was lost can drop the retry. It tells
// one notification from another, not which is newer: the body's sequence does (see
// the package documentation, "What a receiver sees").
const IdempotencyKeyHeader = "Idempotency-Key"

// NotifierConfig holds a Notifier's settings; the zero value has the defaults.
type NotifierConfig struct {
	// Client makes the requests; nil is a client that does not follow redirects (a
	// notification URL that moved is an operator's to update, not a POST to turn into a
	// GET). Each attempt is bounded by AttemptTimeout whatever the client's own timeout.
	Client *http.Client
	// AttemptTimeout bounds one attempt; 0 means DefaultAttemptTimeout. An attempt is
	// also cut short when its successor falls due (early retries are quick, so their
	// attempts are short too), so that attempts of a notification never overlap.
	AttemptTimeout time.Duration
	// Schedule spaces the attempts; nil means DefaultSchedule.
	Schedule Schedule
	// MaxAttempts is how many attempts a notification gets before it is dead; 0 means
	// DefaultMaxAttempts.
	MaxAttempts int
	// Workers is how many attempts run at once; 0 means DefaultWorkers.
	Workers int
	// PollInterval is how often the Notifier looks for due retries and for notifications
	// other processes created; 0 means DefaultPollInterval. Wake makes it look at once.
	PollInterval time.Duration
	// UserAgent is sent with every request; "" means "feedkit-locksensors".
	UserAgent string
	Clock     clock.Clock
	Logger    *slog.Logger
	// Observer is told of every attempt, cancellation and store error, for metrics; nil
	// tells no one.
	Observer Observer
}

// Notifier delivers the Store's pending notifications: it claims the due ones, POSTs
// each to its client's URL as it is at that moment, and records every attempt. Any
// number of Notifiers, in any number of processes, may share a Store: a claim is
// exclusive, so no attempt is made twice. Attempts run in parallel, so notifications
// arrive in no promised order; each carries its sensor's sequence, by which a receiver
// tells the newer from the older (see the package documentation).
type Notifier struct {
	store Store
	cfg   NotifierConfig
	wake  chan struct{}
	stats notifyCounters
}

// NotifierStats counts what a Notifier did.
type NotifierStats struct {
	Attempts  uint64 `json:"attempts"`
	Delivered uint64 `json:"delivered"`
	Failed    uint64 `json:"failed"`    // attempts that failed (a retry is due later)
	Dead      uint64 `json:"dead"`      // notifications given up
	Cancelled uint64 `json:"cancelled"` // notifications whose client was no longer linked
	Errors    uint64 `json:"errors"`    // store errors
}

type notifyCounters struct {
	attempts, delivered, failed, dead, cancelled, errors atomic.Uint64
}

// Body is what a client receives, as JSON:
//
//	{"notification_id": 42, "sensor_id": "xa7v9Dfadr7H",
//	 "address": "Moscow, Russia, Svobody st. 23 fl 1 room 16",
//	 "event": "changed", "state": 1, "time": "2026-11-21T11:59:59.25Z",
//	 "reading_at": "2026-11-21T11:59:59.25Z", "sequence": 7}
//
// Notifications arrive in no promised order, and one may arrive more than once; the
// sequence puts them in order (see the package documentation, "What a receiver sees").
type Body struct {
	// NotificationID is the notification's, the same in every attempt to deliver it
	// (and in the Idempotency-Key header).
	NotificationID NotificationID `json:"notification_id"`
	SensorID       SensorID       `json:"sensor_id"`
	// Address is the sensor's installation address as it is at the attempt.
	Address string `json:"address"`
	Event   Event  `json:"event"`
	// State is the sensor's state the event reports: the new one for changed, the last
	// known for lost and restored.
	State State `json:"state"`
	// Time is when the event happened: the reading's ts for changed, when the silence
	// was found for lost (the service's clock), when the reading was received for
	// restored (the service's clock).
	Time time.Time `json:"time"`
	// ReadingAt is the sensor's own time (its ts, RFC 3339 to the microsecond when it
	// sent fractions) of the reading the event is about: the reading that set State for
	// changed, the last reading before the silence for lost, the reading that ended it
	// for restored. Absent only from a loss or restoration recorded by a version of the
	// service before sequences.
	ReadingAt time.Time `json:"reading_at,omitzero"`
	// Sequence is the number of the event among the sensor's events: 1 for its first,
	// one more for each next, changed, lost and restored alike. Of two notifications of
	// a sensor, the one with the higher Sequence is the newer news, whichever arrived
	// last; a retry of a notification carries the same Sequence as the first attempt.
	Sequence int64 `json:"sequence"`
}

// NewNotifier returns a Notifier that delivers store's notifications, or an error
// naming the bad field of cfg.
func NewNotifier(store Store, cfg NotifierConfig) (*Notifier, error) {
	if store == nil {
		return nil, errors.New("locks: NewNotifier: store is nil")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"AttemptTimeout", int64(cfg.AttemptTimeout)}, {"MaxAttempts", int64(cfg.MaxAttempts)},
		{"Workers", int64(cfg.Workers)}, {"PollInterval", int64(cfg.PollInterval)}} {
		if f.v < 0 {
			return nil, &FieldError{Field: "NotifierConfig." + f.name, Problem: "negative"}
		}
	}
	if v, ok := cfg.Schedule.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("NotifierConfig.Schedule: %w", err)
		}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	cfg.AttemptTimeout = cmp.Or(cfg.AttemptTimeout, DefaultAttemptTimeout)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.Workers = cmp.Or(cfg.Workers, DefaultWorkers)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultSchedule
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "feedkit-locksensors"
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Notifier{store: store, cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// Wake makes Run look for due notifications at once: a new one was created.
func (n *Notifier) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Stats returns the Notifier's counters.
func (n *Notifier) Stats() NotifierStats {
	c := &n.stats
	return NotifierStats{Attempts: c.attempts.Load(), Delivered: c.delivered.Load(), Failed: c.failed.Load(),
		Dead: c.dead.Load(), Cancelled: c.cancelled.Load(), Errors: c.errors.Load()}
}

// minAttempt is the least time an attempt is given, and so the least delay between
// two attempts, whatever the schedule says.
const minAttempt = 100 * time.Millisecond

// retryAfter is the delay Claim gives attempt k's successor: the schedule's, on a
// microsecond as a Store keeps times (a due time between two would be reached by the
// clock but not by the truncated time a claim compares it with).
func (n *Notifier) retryAfter(k int) time.Duration {
	return max(n.cfg.Schedule.After(k), minAttempt).Truncate(time.Microsecond)
}

// Run delivers notifications until ctx ends, then returns nil once its attempts have
// ended and been recorded. The attempts under way when ctx ends are completed (each
// within AttemptTimeout), not cut short: a claim has counted them, and the notifier's
// own stop is no failure of the client's, least of all at a notification's last attempt.
func (n *Notifier) Run(ctx context.Context) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		inFlight int
		freed    = make(chan struct{}, 1)
	)
	defer wg.Wait()
	for {
		mu.Lock()
		// A claim is a page: at most MaxLimit, however many workers are free.
		free := min(n.cfg.Workers-inFlight, MaxLimit)
		mu.Unlock()
		got := 0
		if free > 0 {
			ds, err := n.store.Claim(ctx, ClaimRequest{Now: n.now(), Limit: free,
				MaxAttempts: n.cfg.MaxAttempts, RetryAfter: n.retryAfter})
			if err != nil && ctx.Err() == nil {
				n.storeFailed()
				n.cfg.Logger.Error("locks: claim notifications", "err", err)
			}
			got = len(ds)
			mu.Lock()
			inFlight += got
			mu.Unlock()
			for _, d := range ds {
				wg.Go(func() {
					n.attempt(ctx, d)
					mu.Lock()
					inFlight--
					mu.Unlock()
					select {
					case freed <- struct{}{}:
					default:
					}
				})
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if got > 0 && got == free {
			continue // there may be more due: claim again as soon as a worker is free
		}
		if err := n.idle(ctx, free == 0, freed); err != nil {
			return nil
		}
	}
}

// idle waits for a reason to claim again: a worker freed (when all were busy), a Wake,
// the next retry falling due, or the poll interval (for what other processes create).
func (n *Notifier) idle(ctx context.Context, busy bool, freed <-chan struct{}) error {
	var freedC <-chan struct{}
	if busy {
		freedC = freed
	}
	wait := n.cfg.PollInterval
	if next, err := n.store.NextDue(ctx); err == nil && !next.IsZero() {
		if d := next.Sub(n.cfg.Clock.Now()); d > 0 {
			wait = min(wait, d)
		} else {
			// Due already yet not claimed: another notifier holds it for a moment.
			wait = min(wait, 50*time.Millisecond)
		}
	}
	t := n.cfg.Clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-n.wake:
	case <-freedC:
	case <-t.C():
	}
	return nil
}

func (n *Notifier) now() time.Time { return n.cfg.Clock.Now().UTC().Truncate(time.Microsecond) }

// attempt makes attempt d.Attempts of d and records it.
func (n *Notifier) attempt(ctx context.Context, d Delivery) {
	r := Result{Notification: d.ID, N: d.Attempts}
	if !d.Linked {
		r.At, r.Status, r.Reason = n.now(), Cancelled, fmt.Sprintf("client %d is no longer linked to sensor %q", d.ClientID, d.SensorID)
		n.stats.cancelled.Add(1)
		if o := n.cfg.Observer; o != nil {
			o.LockNotificationCancelled()
		}
		n.finish(ctx, r)
		return
	}
	n.stats.attempts.Add(1)
	start := n.now()
	// Until the successor is due at the latest: a retry never starts while this runs.
	timeout := min(n.cfg.AttemptTimeout, max(d.NextAttempt.Sub(start), minAttempt))
	code, err := n.post(context.WithoutCancel(ctx), d, timeout)
	a := &Attempt{Notification: d.ID, N: d.Attempts, At: start, Duration: n.cfg.Clock.Since(start), StatusCode: code}
	r.Attempt, r.At = a, n.now()
	var outcome AttemptOutcome
	switch {
	case err == nil:
		r.Status, outcome = Delivered, AttemptDelivered
		n.stats.delivered.Add(1)
	case d.Attempts >= n.cfg.MaxAttempts:
		a.Error = err.Error()
		r.Status, r.Reason, outcome = Dead, fmt.Sprintf("gave up after %d attempts: %v", d.Attempts, err), AttemptDead
		n.stats.dead.Add(1)
		n.cfg.Logger.Warn("locks: notification dead", "id", d.ID, "sensor", d.SensorID, "client", d.ClientID, "err", err)
	default:
		a.Error = err.Error()
		r.Status, outcome = Pending, AttemptFailed
		n.stats.failed.Add(1)
	}
	if o := n.cfg.Observer; o != nil {
		o.LockNotificationAttempted(outcome, a.Duration)
	}
	n.finish(ctx, r)
}

// finish records r even while the Notifier is stopping: the attempt was made.
func (n *Notifier) finish(ctx context.Context, r Result) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := n.store.Finish(ctx, r); err != nil && !errors.Is(err, ErrNotFound) {
		n.storeFailed()
		n.cfg.Logger.Error("locks: record a notification attempt", "id", r.Notification, "err", err)
	}
}

// storeFailed counts a Store error.
func (n *Notifier) storeFailed() {
	n.stats.errors.Add(1)
	if o := n.cfg.Observer; o != nil {
		o.LockStoreFailed(PartNotifier)
	}
}

// post sends d to its client and returns the status code, and an error unless 2xx.
func (n *Notifier) post(ctx context.Context, d Delivery, timeout time.Duration) (int, error) {
	body, err := json.Marshal(Body{NotificationID: d.ID, SensorID: d.SensorID, Address: d.Address,
		Event: d.Event, State: d.State, Time: d.At, ReadingAt: d.ReadingAt, Sequence: d.Sequence})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Client.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", n.cfg.UserAgent)
	req.Header.Set(IdempotencyKeyHeader, "notification-"+strconv.FormatInt(int64(d.ID), 10))
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		return 0, err
	}
	// Drained (a little) so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("%s answered %s", d.Client.URL, resp.Status)
	}
	return resp.StatusCode, nil
}
