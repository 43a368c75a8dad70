package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
)

// shownSettlements is how many named settlements the run prints (-names): enough to see
// the names, few enough not to drown the story.
const shownSettlements = 3

// namer names what the feed settles (-names): each market line and outcome of every bet
// settlement, in the language asked for, from the SDK's Names, as a listener that shows
// or settles bets does. It counts the names taken and those that failed.
type namer struct {
	lang  string
	tl    *timeline
	names atomic.Pointer[markets.Names] // the open SDK's; a restart opens another

	mu       sync.Mutex
	named    int
	failed   int
	firstErr error
	shown    int
}

// settle names the markets and outcomes of m. A name that cannot be taken is counted, and
// the message is processed as any other.
func (n *namer) settle(ctx context.Context, m *feed.BetSettlement) {
	names := n.names.Load()
	if n.lang == "" || names == nil {
		return
	}
	var lines []string
	ok, bad := 0, 0
	var firstErr error
	fail := func(err error) {
		bad++
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, mk := range m.Markets {
		market, err := names.MarketName(ctx, n.lang, m.Event, mk.ID, mk.Specifiers)
		if err != nil {
			fail(err)
			continue
		}
		ok++
		for _, o := range mk.Outcomes {
			outcome, err := names.OutcomeName(ctx, n.lang, m.Event, mk.ID, mk.Specifiers, o.ID)
			if err != nil {
				fail(err)
				continue
			}
			ok++
			if o.Result == feed.ResultWon {
				lines = append(lines, fmt.Sprintf("%s: %s", market, outcome))
			}
		}
	}
	n.mu.Lock()
	n.named += ok
	n.failed += bad
	if n.firstErr == nil {
		n.firstErr = firstErr
	}
	show := n.shown < shownSettlements && len(lines) > 0
	if show {
		n.shown++
	}
	n.mu.Unlock()
	if show {
		n.tl.printf("settled %s, named in %s: won %s", m.Event, n.lang, strings.Join(lines, "; "))
	}
}

// counts returns the names taken, those that failed, and the first failure.
func (n *namer) counts() (named, failed int, first error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.named, n.failed, n.firstErr
}
