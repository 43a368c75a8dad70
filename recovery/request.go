package recovery

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// request is one attempt to start a recovery.
type request struct {
	producer feed.Producer
	id       int64
	from, at time.Time
}

// result is what became of a request.
type result struct {
	req         request
	reservation Reservation
	err         error // the ledger's or the API's
	releaseErr  error // a reservation that could not be released after a failure
}

// kick sends the recovery p needs, unless one is in flight or its retry is not due. With
// recoveries disabled it skips the recovery and makes the producer healthy at once.
func (m *Manager) kick(p *producer, now time.Time) {
	if !p.needs || p.inFlight != 0 || now.Before(p.retryAt) {
		return
	}
	if !m.s.enabled {
		m.stats.RecoveriesSkipped++
		m.logLocked(slog.LevelInfo, "recovery: disabled, producer made healthy without a recovery", p)
		m.becomeHealthy(p, now)
		return
	}
	from := p.from
	if earliest := now.Add(-p.maxLen); from.Before(earliest) {
		from = earliest // the need is older than the longest recovery by now
	}
	m.nextID++
	req := request{producer: p.feed, id: m.nextID, from: from, at: now}
	p.inFlight = req.id
	m.wg.Add(1)
	go m.send(req)
}

// send reserves a place in the account's limits, calls the API, and gives the place back
// when the API did not accept the request: only successful requests count.
func (m *Manager) send(req request) {
	defer m.wg.Done()
	ctx := m.ctx
	res := result{req: req}
	res.reservation, res.err = m.s.Ledger.Reserve(ctx, LedgerRequest{
		Account: m.s.Account, Node: m.s.node, Producer: req.producer.ID,
		At: req.at, Length: req.at.Sub(req.from), Limits: m.s.Limits,
	})
	if res.err == nil && res.reservation.Allowed {
		res.err = m.s.requester.InitiateRecovery(ctx, req.producer, req.from, req.id)
		if res.err != nil {
			res.releaseErr = m.s.Ledger.Release(context.WithoutCancel(ctx), res.reservation.ID)
		}
	}
	select {
	case m.results <- res:
	case <-ctx.Done():
	}
}

// onResult applies the outcome of a request.
func (m *Manager) onResult(r result, now time.Time) {
	p := m.producers[r.req.producer.ID]
	p.inFlight = 0
	if r.releaseErr != nil {
		m.reportLocked(&RequestError{Producer: p.feed.ID, RequestID: r.req.id, After: r.req.from, Err: r.releaseErr, Release: true})
	}
	switch {
	case r.err != nil:
		p.retryAt = now.Add(m.s.retry.Delay(p.attempt))
		var api *feed.APIError
		if errors.As(r.err, &api) && api.RetryAfter > 0 && now.Add(api.RetryAfter).After(p.retryAt) {
			p.retryAt = now.Add(api.RetryAfter) // the API said when (a 429 or 503 with Retry-After)
		}
		p.attempt++
		p.again = false // the retry is the request the new need called for
		m.stats.RequestsFailed++
		m.observeRequestLocked(p.feed.ID, feed.ProducerRecovery, RequestFailed)
		m.reportLocked(&RequestError{Producer: p.feed.ID, RequestID: r.req.id, After: r.req.from, RetryAt: p.retryAt, Err: r.err})
	case !r.reservation.Allowed:
		p.retryAt = r.reservation.RetryAt
		m.stats.RequestsRateLimited++
		m.observeRequestLocked(p.feed.ID, feed.ProducerRecovery, RequestRateLimited)
		m.reportLocked(&RequestError{Producer: p.feed.ID, RequestID: r.req.id, After: r.req.from, RetryAt: p.retryAt, Err: ErrRateLimited})
	default:
		p.needs, p.attempt, p.retryAt = false, 0, time.Time{}
		p.coveredFrom, p.acceptedAt = r.req.from, now
		p.rec.State = Recovering
		p.rec.RecoveryRequestedAt = r.req.at
		p.rec.RecoverySnapshotID = r.req.id
		p.rec.RecoveryNodeID = m.s.node
		m.stats.RecoveriesRequested++
		m.observeRequestLocked(p.feed.ID, feed.ProducerRecovery, RequestAccepted)
		m.saveLocked(p, now)
		m.logLocked(slog.LevelInfo, "recovery: requested", p, slog.Int64("request_id", r.req.id), slog.Time("from", r.req.from))
		if l := m.s.listener; l != nil {
			ri := feed.RecoveryInitiated{Producer: p.feed.ID, RequestID: r.req.id, Kind: feed.ProducerRecovery, After: r.req.from}
			m.effects = append(m.effects, func() {
				m.callListener("OnRecoveryInitiated", func() { l.OnRecoveryInitiated(m.ctx, ri) })
			})
		}
		if p.again {
			p.again = false
			m.need(p, now, "a new need arose while the request was sent")
		} else {
			m.maybeComplete(p, now)
		}
	}
	m.kick(p, now)
}
