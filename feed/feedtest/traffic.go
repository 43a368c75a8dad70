package feedtest

import (
	"math/rand/v2"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// A simulated match lives through a script of messages: a fixture change, then odds
// changes with the odd bet stop, then its settlement, sometimes rolled back and settled
// again, sometimes a cancellation and its rollback. When the script is done the match is
// replaced by a new one, so a long run sees matches come and go.
type simMatch struct {
	urn      feed.URN
	sport    int
	producer feed.Producer
	script   []feed.MessageType
	markets  []simMarket
	home     int
	away     int
	lastTS   time.Time
}

type simMarket struct {
	id         int
	specifiers feed.Specifiers
	outcomes   []string
	odds       []int // in hundredths, so that the XML carries "1.85", not "1.8499999999999999"
}

// marketCatalog is what the simulator offers odds on: ids and outcomes as the feed's
// soccer markets have them.
var marketCatalog = []simMarket{
	{id: 1, outcomes: []string{"1", "2", "3"}},
	{id: 18, specifiers: "total=2.5", outcomes: []string{"12", "13"}},
	{id: 18, specifiers: "total=3.5", outcomes: []string{"12", "13"}},
	{id: 16, specifiers: "hcp=-1.5", outcomes: []string{"1714", "1715"}},
	{id: 10, outcomes: []string{"9", "10", "11"}},
	{id: 29, outcomes: []string{"74", "76"}},
	{id: 60, outcomes: []string{"1", "2", "3"}},
}

func newSimMatch(rng *rand.Rand, id int64, p feed.Producer) *simMatch {
	m := &simMatch{
		urn:      feed.URN{Prefix: "sr", Type: "match", ID: id},
		sport:    1 + rng.IntN(3),
		producer: p,
	}
	if p.Scope&feed.ScopeVirtual != 0 {
		m.urn.Prefix = "vf"
	}
	n := 3 + rng.IntN(4)
	for _, i := range rng.Perm(len(marketCatalog))[:n] {
		mk := marketCatalog[i]
		mk.odds = make([]int, len(mk.outcomes))
		for j := range mk.odds {
			mk.odds[j] = 120 + rng.IntN(800)
		}
		m.markets = append(m.markets, mk)
	}
	m.script = append(m.script, feed.MessageFixtureChange)
	for range 20 + rng.IntN(180) {
		if rng.IntN(10) == 0 {
			m.script = append(m.script, feed.MessageBetStop)
		} else {
			m.script = append(m.script, feed.MessageOddsChange)
		}
	}
	m.script = append(m.script, feed.MessageBetSettlement)
	switch rng.IntN(20) {
	case 0:
		m.script = append(m.script, feed.MessageRollbackBetSettlement, feed.MessageBetSettlement)
	case 1:
		m.script = append(m.script, feed.MessageBetCancel, feed.MessageRollbackBetCancel)
	}
	return m
}

func (m *simMatch) live() bool { return m.producer.Scope&(feed.ScopeLive|feed.ScopeVirtual) != 0 }

// key returns the routing key of a message of type t about this match.
func (m *simMatch) key(t feed.MessageType, node feed.NodeID) feed.RoutingKey {
	k := eventKey(t, m.urn, m.producer, m.sport)
	k.Node = node
	return k
}

// next builds the match's next message, stamped now, or with the match's previous stamp
// if the clock went back (a feed delay grew): a match's timestamps never decrease, and
// never run ahead of the clock, so that a recovery from a moment replays everything sent
// after it. It returns false when the script is done.
func (m *simMatch) next(rng *rand.Rand, now time.Time) (feed.Message, bool) {
	if len(m.script) == 0 {
		return nil, false
	}
	t := m.script[0]
	m.script = m.script[1:]
	now = now.Truncate(time.Millisecond)
	if now.Before(m.lastTS) {
		now = m.lastTS
	}
	m.lastTS = now
	h := feed.Header{Producer: m.producer.ID, Event: m.urn, Timestamp: now.UTC()}

	switch t {
	case feed.MessageFixtureChange:
		return &feed.FixtureChange{Header: h, ChangeType: 1, StartTime: now.Add(time.Hour).UTC()}, true
	case feed.MessageBetStop:
		return &feed.BetStop{Header: h, Groups: "all", MarketStatus: feed.MarketSuspended}, true
	case feed.MessageOddsChange:
		return m.oddsChange(rng, h), true
	case feed.MessageBetSettlement:
		s := &feed.BetSettlement{Header: h, Certainty: 2}
		for _, mk := range m.markets {
			sm := feed.SettledMarket{ID: mk.id, Specifiers: mk.specifiers}
			winner := rng.IntN(len(mk.outcomes))
			for i, o := range mk.outcomes {
				r := feed.ResultLost
				if i == winner {
					r = feed.ResultWon
				}
				sm.Outcomes = append(sm.Outcomes, feed.SettledOutcome{ID: o, Result: r, DeadHeatFactor: 1})
			}
			s.Markets = append(s.Markets, sm)
		}
		return s, true
	case feed.MessageRollbackBetSettlement:
		return &feed.RollbackBetSettlement{Header: h, Markets: m.refs(0, false)}, true
	case feed.MessageBetCancel:
		return &feed.BetCancel{Header: h, StartTime: now.Add(-time.Minute).UTC(), EndTime: now.UTC(), Markets: m.refs(8, true)}, true
	default: // feed.MessageRollbackBetCancel
		return &feed.RollbackBetCancel{Header: h, StartTime: now.Add(-time.Minute).UTC(), EndTime: now.UTC(), Markets: m.refs(0, false)}, true
	}
}

func (m *simMatch) refs(voidReason int, hasVoidReason bool) []feed.MarketRef {
	refs := make([]feed.MarketRef, 0, len(m.markets))
	for _, mk := range m.markets {
		refs = append(refs, feed.MarketRef{ID: mk.id, Specifiers: mk.specifiers,
			VoidReason: voidReason, HasVoidReason: hasVoidReason})
	}
	return refs
}

func (m *simMatch) oddsChange(rng *rand.Rand, h feed.Header) *feed.OddsChange {
	oc := &feed.OddsChange{Header: h}
	if m.live() {
		if rng.IntN(25) == 0 {
			if rng.IntN(2) == 0 {
				m.home++
			} else {
				m.away++
			}
		}
		oc.EventStatus = &feed.SportEventStatus{Status: 1, Reporting: 1, MatchStatus: 6,
			HomeScore: float64(m.home), AwayScore: float64(m.away),
			Fields: feed.StatusReporting | feed.StatusHomeScore | feed.StatusAwayScore}
	}
	for _, mk := range m.markets {
		om := feed.OddsMarket{ID: mk.id, Specifiers: mk.specifiers, Status: feed.MarketActive}
		for i, o := range mk.outcomes {
			// A small random walk keeps the odds plausible from one change to the next.
			mk.odds[i] = max(101, mk.odds[i]+rng.IntN(21)-10)
			om.Outcomes = append(om.Outcomes, feed.OddsOutcome{ID: o, Odds: float64(mk.odds[i]) / 100, HasOdds: true,
				Probability: float64(1000000/mk.odds[i]) / 10000, HasProbability: true})
		}
		oc.Markets = append(oc.Markets, om)
	}
	return oc
}
