package feedkit_test

import (
	"sync"
	"time"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// countingObserver counts what every part of an SDK tells its Observer, for tests that
// hold the counts against the SDK's Stats.
type countingObserver struct {
	mu sync.Mutex
	c  observed
}

// observed is a countingObserver's totals.
type observed struct {
	Received, Unparsable          uint64
	Calls                         map[concurrent.CallResult]uint64
	Timed                         uint64
	UpsHeld, UpsReleased          uint64
	Statuses                      []feed.ProducerStatus
	Alives                        uint64
	Requests                      map[recovery.RequestResult]uint64
	Ended                         map[recovery.RecoveryResult]uint64
	APIRequests, APIHeld          uint64
	CacheHits, CacheMisses        uint64
	Evictions                     uint64
	LinkUps, LinkDowns, LinkFails uint64
}

var _ feedkit.Observer = (*countingObserver)(nil)

func newCountingObserver() *countingObserver {
	return &countingObserver{c: observed{Calls: map[concurrent.CallResult]uint64{},
		Requests: map[recovery.RequestResult]uint64{}, Ended: map[recovery.RecoveryResult]uint64{}}}
}

// totals returns a copy of the counts so far.
func (o *countingObserver) totals() observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.c
	c.Statuses = append([]feed.ProducerStatus(nil), c.Statuses...)
	c.Calls, c.Requests, c.Ended = clone(c.Calls), clone(c.Requests), clone(c.Ended)
	return c
}

func clone[K comparable](m map[K]uint64) map[K]uint64 {
	out := make(map[K]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (o *countingObserver) count(f func(*observed)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(&o.c)
}

func (o *countingObserver) FeedMessageReceived(feed.SessionRef, int, feed.MessageType, int) {
	o.count(func(c *observed) { c.Received++ })
}
func (o *countingObserver) FeedMessageUnparsable(feed.SessionRef, int, feed.MessageType) {
	o.count(func(c *observed) { c.Unparsable++ })
}
func (o *countingObserver) ListenerCalled(call concurrent.Call) {
	o.count(func(c *observed) {
		c.Calls[call.Result]++
		if call.Timed {
			c.Timed++
		}
	})
}
func (o *countingObserver) ProducerUpHeld(int, feed.RecoveryKind) {
	o.count(func(c *observed) { c.UpsHeld++ })
}
func (o *countingObserver) ProducerUpReleased(int, feed.RecoveryKind, time.Duration) {
	o.count(func(c *observed) { c.UpsReleased++ })
}
func (o *countingObserver) ProducerStatusChanged(s feed.ProducerStatus) {
	o.count(func(c *observed) { c.Statuses = append(c.Statuses, s) })
}
func (o *countingObserver) ProducerAlive(int, time.Duration) {
	o.count(func(c *observed) { c.Alives++ })
}
func (o *countingObserver) RecoveryRequested(_ int, _ feed.RecoveryKind, r recovery.RequestResult) {
	o.count(func(c *observed) { c.Requests[r]++ })
}
func (o *countingObserver) RecoveryEnded(_ int, _ feed.RecoveryKind, r recovery.RecoveryResult, _ time.Duration) {
	o.count(func(c *observed) { c.Ended[r]++ })
}
func (o *countingObserver) APIRequest(string, string, int, time.Duration) {
	o.count(func(c *observed) { c.APIRequests++ })
}
func (o *countingObserver) APIRequestHeld(string, string) {
	o.count(func(c *observed) { c.APIHeld++ })
}
func (o *countingObserver) CacheRead(_ string, hit bool) {
	o.count(func(c *observed) {
		if hit {
			c.CacheHits++
		} else {
			c.CacheMisses++
		}
	})
}
func (o *countingObserver) CacheEvicted(string) { o.count(func(c *observed) { c.Evictions++ }) }
func (o *countingObserver) TransportLinkUp()    { o.count(func(c *observed) { c.LinkUps++ }) }
func (o *countingObserver) TransportLinkDown(error) {
	o.count(func(c *observed) { c.LinkDowns++ })
}
func (o *countingObserver) TransportAttemptFailed(error) {
	o.count(func(c *observed) { c.LinkFails++ })
}
