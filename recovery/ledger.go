package recovery

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Ledger records the recovery requests of an account, so that the rate limits hold across
// every node id (and every process) of the account. Reserve decides and records in one
// step, atomically with respect to every other Reserve of the account: two nodes can never
// both take the last place in a window.
//
// Limits count successful requests only: the manager reserves a place before it calls the
// recovery API and releases it when the API did not accept the request.
type Ledger interface {
	// Reserve records r if r.Limits allow it and returns the reservation's id; otherwise
	// it records nothing and says when the limits will allow it.
	Reserve(ctx context.Context, r LedgerRequest) (Reservation, error)
	// Release forgets a reservation whose request the API did not accept.
	Release(ctx context.Context, id int64) error
}

// LedgerRequest is a recovery request about to be sent.
type LedgerRequest struct {
	Account  string      // the feed account; the limits are per account
	Node     feed.NodeID // the node asking (recorded, not used by the limits)
	Producer int         // the producer to recover (recorded, not used by the limits)
	At       time.Time   // when the request is sent
	Length   time.Duration
	Limits   Limits
}

// Reservation is a ledger's answer to Reserve.
type Reservation struct {
	// Allowed reports whether the request was recorded.
	Allowed bool
	// ID identifies the recorded request for Release; 0 when refused.
	ID int64
	// Class is the tier of the request's length, -1 when no tier limits it.
	Class int
	// RetryAt is, when refused, the earliest moment the limits allow the request.
	RetryAt time.Time
}

// MemoryLedger is a Ledger for one process. Its zero value is ready to use.
type MemoryLedger struct {
	mu     sync.Mutex
	nextID int64
	// times holds the reservations of each account and class, oldest first.
	times map[ledgerKey][]reservation
}

type ledgerKey struct {
	account string
	class   int
}

type reservation struct {
	at time.Time
	id int64
}

// NewMemoryLedger returns an empty in-memory ledger.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{} }

// Reserve implements Ledger.
func (l *MemoryLedger) Reserve(_ context.Context, r LedgerRequest) (Reservation, error) {
	class := r.Limits.Class(r.Length)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextID++
	if class < 0 {
		return Reservation{Allowed: true, ID: l.nextID, Class: class}, nil
	}
	if l.times == nil {
		l.times = make(map[ledgerKey][]reservation)
	}
	key := ledgerKey{r.Account, class}
	rs := l.times[key]
	// Forget what no window counts any more, so the list stays as short as the limits.
	horizon := r.At.Add(-r.Limits.Horizon(class))
	drop := 0
	for drop < len(rs) && !rs[drop].at.After(horizon) {
		drop++
	}
	rs = rs[drop:]
	var buf [64]time.Time
	past := buf[:0]
	for _, x := range rs {
		past = append(past, x.at)
	}
	ok, retryAt := Allow(past, r.At, r.Limits[class].Windows)
	if !ok {
		l.times[key] = rs
		return Reservation{Class: class, RetryAt: retryAt}, nil
	}
	i, _ := slices.BinarySearchFunc(rs, r.At, func(x reservation, t time.Time) int { return x.at.Compare(t) })
	rs = slices.Insert(rs, i, reservation{at: r.At, id: l.nextID})
	l.times[key] = rs
	return Reservation{Allowed: true, ID: l.nextID, Class: class}, nil
}

// Release implements Ledger.
func (l *MemoryLedger) Release(_ context.Context, id int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, rs := range l.times {
		for i, x := range rs {
			if x.id == id {
				l.times[key] = slices.Delete(rs, i, i+1)
				return nil
			}
		}
	}
	return nil
}
