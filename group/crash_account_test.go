//go:build crash

package group_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// The accounting of TestCrashGroup, over the record the children wrote: the listener
// calls of every worker (crash_calls) and the global events every process heard
// (crash_globals). The live messages are accounted by account (group_test.go), as in
// the in-process test; this file adds what kills bring: duplicates, each traced to a
// kill, and the group's ups, each traced to its recovery.

// crashCall is a listener call as recorded.
type crashCall struct {
	life    string
	shard   int
	id      msgID
	request int64
	at      time.Time // recorded, by the database's clock
}

// crashGlobal is a global event as a process heard it.
type crashGlobal struct {
	life, role string
	seq        int
	kind       string
	producer   int
	reason     feed.StatusReason
	request    int64
	rkind      feed.RecoveryKind
	statusNS   int64
	at         time.Time
}

// crashLoadCalls reads every call, in the order they were made: a match's calls one
// after the other, each recorded before the next began.
func crashLoadCalls(ctx context.Context, pool *pgxpool.Pool) ([]crashCall, error) {
	rows, err := pool.Query(ctx, `SELECT life, shard, event, typ, at_ms, request, recorded_at FROM crash_calls ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	urns := map[string]feed.URN{}
	var out []crashCall
	for rows.Next() {
		var c crashCall
		var event string
		var typ int
		if err := rows.Scan(&c.life, &c.shard, &event, &typ, &c.id.at, &c.request, &c.at); err != nil {
			return nil, err
		}
		urn, ok := urns[event]
		if !ok {
			if urn, err = feed.ParseURN(event); err != nil {
				return nil, fmt.Errorf("a call of event %q: %w", event, err)
			}
			urns[event] = urn
		}
		c.id.event, c.id.typ = urn, feed.MessageType(typ)
		out = append(out, c)
	}
	return out, rows.Err()
}

// crashLoadGlobals reads the global events, each life's in its order.
func crashLoadGlobals(ctx context.Context, pool *pgxpool.Pool) ([]crashGlobal, error) {
	rows, err := pool.Query(ctx, `SELECT life, role, seq, kind, producer, reason, request, recovery_kind, status_ns, recorded_at
		FROM crash_globals ORDER BY life, seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []crashGlobal
	for rows.Next() {
		var g crashGlobal
		var reason, rkind int
		if err := rows.Scan(&g.life, &g.role, &g.seq, &g.kind, &g.producer, &reason, &g.request, &rkind, &g.statusNS, &g.at); err != nil {
			return nil, err
		}
		g.reason, g.rkind = feed.StatusReason(reason), feed.RecoveryKind(rkind)
		out = append(out, g)
	}
	return out, rows.Err()
}

// crashCalled counts the recorded calls of each message, whatever their request: what
// the end of the run waits on.
func crashCalled(ctx context.Context, pool *pgxpool.Pool) (map[crashMsgKey]int, error) {
	rows, err := pool.Query(ctx, `SELECT event, typ, at_ms, count(*) FROM crash_calls GROUP BY event, typ, at_ms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[crashMsgKey]int{}
	for rows.Next() {
		var k crashMsgKey
		var n int
		if err := rows.Scan(&k.event, &k.typ, &k.at, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

// crashMsgKey is a msgID as the table has it.
type crashMsgKey struct {
	event string
	typ   int
	at    int64
}

func crashKeyOf(id msgID) crashMsgKey {
	return crashMsgKey{event: id.event.String(), typ: int(id.typ), at: id.at}
}

// crashDupKey is a message as a listener gets it: the message, and the recovery that
// replayed it (0: live).
type crashDupKey struct {
	id      msgID
	request int64
}

// crashExpected counts how often the feed sent each message with each request: live
// once (or more: a match may send two messages of a type in one millisecond), and once
// in each replay that held it.
func crashExpected(byMatch map[feed.URN][]feedtest.Sent, sent []feedtest.Sent) map[crashDupKey]int {
	out := map[crashDupKey]int{}
	for _, msgs := range byMatch {
		for _, s := range msgs {
			out[crashDupKey{idOf(s.Message), 0}]++
		}
	}
	for _, s := range sent {
		if s.Replay && !s.Key.Type.IsSystem() {
			out[crashDupKey{idOf(s.Message), s.Message.MessageHeader().RequestID}]++
		}
	}
	return out
}

// crashDuplicates are the calls made more often than the feed sent their message with
// their request: each must be a kill's, made again by a later life of the killed
// worker's shard after the kill, or (on a machine so busy that the broker missed a
// worker's heartbeats) made again after a worker lost its connection.
type crashDuplicates struct {
	live, replayed int            // excess calls of live messages, and of replayed ones with the same request
	afterLoss      int            // of which some after a lost connection rather than a kill
	byKill         map[string]int // the killed life → the calls of its made again
	unexplained    []string       // excess calls no kill accounts for
	unknown        []string       // calls of what the feed never sent with that request
}

func crashCheckDuplicates(calls []crashCall, expected map[crashDupKey]int, killedAt map[string]time.Time, lost map[string]bool) crashDuplicates {
	type made struct {
		lives  []string // in the order of their first call
		count  map[string]int
		shards map[int]bool
		calls  []crashCall
	}
	byKey := map[crashDupKey]*made{}
	var order []crashDupKey
	for _, c := range calls {
		k := crashDupKey{c.id, c.request}
		m := byKey[k]
		if m == nil {
			m = &made{count: map[string]int{}, shards: map[int]bool{}}
			byKey[k] = m
			order = append(order, k)
		}
		if m.count[c.life] == 0 {
			m.lives = append(m.lives, c.life)
		}
		m.count[c.life]++
		m.shards[c.shard] = true
		m.calls = append(m.calls, c)
	}
	d := crashDuplicates{byKill: map[string]int{}}
	for _, k := range order {
		m, want := byKey[k], expected[k]
		if want == 0 {
			if len(d.unknown) < 10 {
				d.unknown = append(d.unknown, fmt.Sprintf("%v (request %d) by %v", k.id, k.request, m.lives))
			}
			continue
		}
		if len(m.calls) <= want {
			continue
		}
		// The broker delivered the message to one life after another, each taking
		// it once the one before had died without acknowledging it: in the order of
		// their kills (a life never killed last), every life but the last was killed
		// and the next made it only after that kill. (A killed life's last batch may
		// be committed after its death, behind its successor's rows: the order of the
		// rows is not the order of the deliveries.) None made it more often than the
		// feed sent it. A life that lost its connection may have made it again itself,
		// and handed it on at any time.
		lives := slices.Clone(m.lives)
		killTime := func(life string) time.Time {
			if at, ok := killedAt[life]; ok {
				return at
			}
			return time.Unix(1<<40, 0) // never: last
		}
		slices.SortStableFunc(lives, func(a, b string) int { return killTime(a).Compare(killTime(b)) })
		why, loss := "", false
		if len(m.shards) != 1 {
			why = "in more than one shard"
		}
		for i, life := range lives {
			_, killed := killedAt[life]
			switch {
			case why != "":
			case m.count[life] > want && lost[life]:
				loss = true
			case m.count[life] > want:
				why = fmt.Sprintf("%s made it %d times", life, m.count[life])
			case i == len(lives)-1:
			case !killed && lost[life]:
				loss = true
			case !killed:
				why = life + " was never killed"
			default:
				at, next := killedAt[life], lives[i+1]
				for _, c := range m.calls {
					if c.life == next && c.at.Before(at) && why == "" {
						why = fmt.Sprintf("%s made it at %s, before %s was killed at %s", next,
							c.at.Format(time.StampMicro), life, at.Format(time.StampMicro))
					}
				}
			}
		}
		if why != "" {
			d.unexplained = append(d.unexplained, fmt.Sprintf("%v (request %d): %d calls by %v, sent %d times: %s",
				k.id, k.request, len(m.calls), lives, want, why))
			continue
		}
		if k.request == 0 {
			d.live += len(m.calls) - want
		} else {
			d.replayed += len(m.calls) - want
		}
		if loss {
			d.afterLoss += len(m.calls) - want
		}
		for _, life := range lives[:len(lives)-1] {
			d.byKill[life]++
		}
	}
	return d
}

// crashUpKey names an up: its producer and its time, which every process hears alike.
type crashUpKey struct {
	producer int
	ns       int64
}

func (k crashUpKey) String() string {
	return fmt.Sprintf("up of producer %d at %s", k.producer, time.Unix(0, k.ns).UTC().Format(time.StampMicro))
}

// crashUps is what the global events say of the group's ups.
type crashUps struct {
	ups        int      // distinct ups the group told
	recoveries int      // producer recoveries the ingresses initiated
	completed  int      // of which an up followed
	abandoned  []string // the others, and why
	requestOf  map[crashUpKey]int64
	at         map[crashUpKey]time.Time // when the first process heard it
	problems   []string
	early      []string // ups told before their recovery was processed
	timeline   []string // each up, its recovery, and when that recovery was processed
}

// crashCheckUps checks the group's ups: each process heard the statuses in the order
// they changed, and no up twice; each up follows a recovery of its own (the last one
// initiated before it, in the order every process that heard both heard them, but for
// the workers that lost their connection), no two ups share one, and a recovery comes
// between two ups; and every message the feed replayed for an up's recovery was
// processed before anyone heard the up.
func crashCheckUps(globals []crashGlobal, calls []crashCall, sent []feedtest.Sent, killedAt map[string]time.Time, lost map[string]bool) crashUps {
	u := crashUps{requestOf: map[crashUpKey]int64{}, at: map[crashUpKey]time.Time{}}
	problem := func(format string, args ...any) {
		if len(u.problems) < 20 {
			u.problems = append(u.problems, fmt.Sprintf(format, args...))
		}
	}
	earliest := func(m map[crashUpKey]time.Time, k crashUpKey, at time.Time) {
		if old, ok := m[k]; !ok || at.Before(old) {
			m[k] = at
		}
	}
	recAt := map[int64]time.Time{}
	recIngress := map[int64][]string{}
	mapped := map[crashUpKey]map[int64][]string{}
	ingressUps := map[crashUpKey][]string{}

	byLife := map[string][]crashGlobal{}
	var lives []string
	for _, g := range globals {
		if byLife[g.life] == nil {
			lives = append(lives, g.life)
		}
		byLife[g.life] = append(byLife[g.life], g)
	}
	for _, life := range lives {
		lastNS := map[int]int64{}
		pending := map[int]int64{} // the last recovery since the last up, by producer
		hadUp := map[int]bool{}
		heard := map[crashUpKey]bool{}
		for _, g := range byLife[life] {
			switch g.kind {
			case "recovery":
				if g.rkind != feed.ProducerRecovery {
					continue
				}
				if at, ok := recAt[g.request]; !ok || g.at.Before(at) {
					recAt[g.request] = g.at
				}
				if g.role == "ingress" {
					recIngress[g.request] = append(recIngress[g.request], life)
				}
				pending[g.producer] = g.request
			case "up", "down":
				if g.statusNS < lastNS[g.producer] {
					problem("%s heard a %s (%v) of %s after a status of %s", life, g.kind, g.reason,
						time.Unix(0, g.statusNS).UTC().Format(time.StampMicro), time.Unix(0, lastNS[g.producer]).UTC().Format(time.StampMicro))
				}
				lastNS[g.producer] = max(lastNS[g.producer], g.statusNS)
				if g.kind == "down" {
					continue
				}
				k := crashUpKey{g.producer, g.statusNS}
				if heard[k] {
					problem("%s heard the %v twice", life, k)
				}
				heard[k] = true
				earliest(u.at, k, g.at)
				if g.role == "ingress" {
					ingressUps[k] = append(ingressUps[k], life)
				}
				switch r := pending[g.producer]; {
				case lost[life]:
					// It lost its connection, and what was told meanwhile: its
					// order says nothing of the recoveries.
				case r != 0:
					if mapped[k] == nil {
						mapped[k] = map[int64][]string{}
					}
					mapped[k][r] = append(mapped[k][r], life)
				case hadUp[g.producer]:
					problem("%s heard the %v with no recovery since its last up", life, k)
				}
				pending[g.producer], hadUp[g.producer] = 0, true
			}
		}
	}
	for r, in := range recIngress {
		if len(in) > 1 {
			problem("recovery %d initiated by more than one ingress: %v", r, in)
		}
	}
	for k, in := range ingressUps {
		if len(in) > 1 {
			problem("the %v told by more than one ingress: %v", k, in)
		}
	}
	u.ups = len(u.at)
	ups := make([]crashUpKey, 0, len(u.at))
	for k := range u.at {
		ups = append(ups, k)
	}
	sort.Slice(ups, func(i, j int) bool { return u.at[ups[i]].Before(u.at[ups[j]]) })
	byRequest := map[int64][]crashUpKey{}
	for _, k := range ups {
		switch reqs := mapped[k]; len(reqs) {
		case 0:
			problem("the %v follows no recovery in any process that heard it", k)
		case 1:
			for r := range reqs {
				u.requestOf[k] = r
				byRequest[r] = append(byRequest[r], k)
			}
		default:
			problem("the %v follows different recoveries in different processes: %v", k, reqs)
		}
	}
	for r, ks := range byRequest {
		if len(ks) > 1 {
			problem("recovery %d has %d ups: %v", r, len(ks), ks)
		}
	}
	// A recovery between every two ups of a producer: the later one's was initiated
	// after the earlier one was told.
	last := map[int]crashUpKey{}
	for _, k := range ups {
		if prev, ok := last[k.producer]; ok {
			if r, ok := u.requestOf[k]; ok && !recAt[r].After(u.at[prev]) {
				problem("the %v and the %v with no recovery between: recovery %d was initiated at %s, before the first", prev, k, r,
					recAt[r].Format(time.StampMicro))
			}
		}
		last[k.producer] = k
	}

	// Every replayed message of an up's recovery processed before the up was heard.
	replays := map[int64]map[msgID]int{}
	for _, s := range sent {
		if s.Replay && !s.Key.Type.IsSystem() {
			r := s.Message.MessageHeader().RequestID
			if replays[r] == nil {
				replays[r] = map[msgID]int{}
			}
			replays[r][idOf(s.Message)]++
		}
	}
	processedAt := map[crashDupKey][]time.Time{}
	for _, c := range calls {
		if c.request != 0 {
			k := crashDupKey{c.id, c.request}
			processedAt[k] = append(processedAt[k], c.at)
		}
	}
	for _, k := range ups {
		r, ok := u.requestOf[k]
		if !ok {
			continue
		}
		late, never := 0, 0
		var drained time.Time // when the last of the replay was processed
		for id, n := range replays[r] {
			ts := processedAt[crashDupKey{id, r}]
			slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
			switch {
			case len(ts) < n:
				never++
				continue
			case ts[n-1].After(u.at[k]):
				late++
			}
			if ts[n-1].After(drained) {
				drained = ts[n-1]
			}
		}
		u.timeline = append(u.timeline, fmt.Sprintf("the %v after recovery %d (initiated %s, %d messages replayed, the last processed %s), told at %s",
			k, r, recAt[r].Format(time.StampMicro), len(replays[r]), drained.Format(time.StampMicro), u.at[k].Format(time.StampMicro)))
		if late+never > 0 {
			u.early = append(u.early, fmt.Sprintf("the %v (recovery %d) told at %s: of its %d replayed messages %d processed after, %d never",
				k, r, u.at[k].Format(time.StampMicro), len(replays[r]), late, never))
		}
	}

	// The recoveries: those an up followed, and the others.
	requests := make([]int64, 0, len(recIngress))
	for r := range recIngress {
		requests = append(requests, r)
	}
	slices.Sort(requests)
	u.recoveries = len(requests)
	for i, r := range requests {
		if len(byRequest[r]) > 0 {
			u.completed++
			continue
		}
		in := recIngress[r][0]
		why := "under way at the end"
		_, killed := killedAt[in]
		for _, later := range requests[i+1:] {
			if recIngress[later][0] == in {
				why = fmt.Sprintf("%s initiated %d after it", in, later)
				break
			}
		}
		if why == "under way at the end" && killed {
			why = in + " was killed"
		}
		u.abandoned = append(u.abandoned, fmt.Sprintf("%d (%s)", r, why))
	}
	return u
}
