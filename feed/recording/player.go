package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/topic"
)

// PlayerOptions choose what a Player plays, and how fast. The zero value plays every
// delivery of the recording as fast as the sessions take them.
type PlayerOptions struct {
	// From and To bound the deliveries played by their receipt time: from From, before
	// To; a zero bound is open.
	From, To time.Time
	// Events, when not empty, plays only the messages about these events, and the
	// system messages (alives, snapshot_complete) that keep the producers' health.
	Events []feed.URN
	// Types, when not empty, plays only messages of these types.
	Types []feed.MessageType
	// Speed is the pace: 0 plays as fast as the sessions take the messages; N plays at
	// N times the recorded pace, waiting on Clock between messages as they were apart.
	Speed float64
	// Clock paces a Speed other than 0; nil is the wall clock.
	Clock clock.Clock
}

// PlayerStats counts what a Player played.
type PlayerStats struct {
	Read     int64 `json:"read"`     // frames read from the recording
	Played   int64 `json:"played"`   // deliveries that passed the options' filters
	Handed   int64 `json:"handed"`   // deliveries handed to sessions (one per matching session)
	Skipped  int64 `json:"skipped"`  // deliveries the filters left out
	Unrouted int64 `json:"unrouted"` // deliveries no session's bindings matched
}

// A Player is a feed.Transport that plays a recording to the sessions that subscribe to
// it, as the broker delivered it: each recorded delivery, in the recorded order, to
// every session whose bindings match its routing key. Give it to the SDK
// (feedkit.Config.Transport), open the SDK, then Play, or Step in a test.
//
// The same recording played with the same options hands every session the same messages
// in the same order, every time: a listener's calls replay as they were made (each
// match's in order; with serial delivery, all of them).
type Player struct {
	opts PlayerOptions
	clk  clock.Clock

	// handing is held while a delivery is handed to the sessions, so that a
	// subscription's Close can wait until the Player calls its session no more.
	handing chan struct{}

	mu    sync.Mutex
	r     *Reader
	subs  []*subscription
	prev  time.Time // receipt time of the last delivery played, for the pace
	stats PlayerStats
	err   error // the recording's end (io.EOF) or why it stopped
}

// NewPlayer returns a Player of the recording r.
func NewPlayer(r io.Reader, opts PlayerOptions) (*Player, error) {
	if opts.Speed < 0 {
		return nil, fmt.Errorf("recording: PlayerOptions.Speed %v must not be negative", opts.Speed)
	}
	if !opts.To.IsZero() && opts.To.Before(opts.From) {
		return nil, fmt.Errorf("recording: PlayerOptions.To %v is before From %v", opts.To, opts.From)
	}
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	return &Player{opts: opts, clk: clock.OrReal(opts.Clock), r: rd, handing: make(chan struct{}, 1)}, nil
}

type subscription struct {
	p        *Player
	patterns []topic.Pattern
	r        feed.Receiver
}

// Subscribe adds a session; it is told the connection is up at once. It implements
// feed.Transport.
func (p *Player) Subscribe(_ context.Context, bindings []string, r feed.Receiver) (feed.Subscription, error) {
	s := &subscription{p: p, r: r}
	for _, b := range bindings {
		s.patterns = append(s.patterns, topic.Compile(b))
	}
	p.mu.Lock()
	p.subs = append(p.subs, s)
	p.mu.Unlock()
	r.ConnectionUp()
	return s, nil
}

// Close removes the session from the play, and returns once the Player calls it no more
// (a delivery being handed to it has returned), or when ctx ends.
func (s *subscription) Close(ctx context.Context) error {
	s.p.mu.Lock()
	s.p.subs = slices.DeleteFunc(s.p.subs, func(x *subscription) bool { return x == s })
	s.p.mu.Unlock()
	select {
	case s.p.handing <- struct{}{}:
		<-s.p.handing
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Play plays the rest of the recording and returns at its end (nil), when ctx ends, or
// with the recording's error (a *TornError after every whole block was played).
func (p *Player) Play(ctx context.Context) error {
	for {
		n, err := p.Step(ctx, 1<<20)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// Step plays the next n deliveries that pass the filters and returns how many it played:
// fewer than n at the recording's end. A test steps a replay to look at the listeners
// between messages.
func (p *Player) Step(ctx context.Context, n int) (int, error) {
	played := 0
	for played < n {
		if err := ctx.Err(); err != nil {
			return played, err
		}
		f, subs, ok, err := p.next()
		if err != nil {
			return played, err
		}
		if !ok {
			return played, nil
		}
		if err := p.pace(ctx, f.At); err != nil {
			return played, err
		}
		if err := p.hand(ctx, f, subs); err != nil {
			return played, err
		}
		played++
	}
	return played, nil
}

// hand gives a delivery to its sessions, each still subscribed.
func (p *Player) hand(ctx context.Context, f Frame, subs []*subscription) error {
	select {
	case p.handing <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.handing }()
	for i, s := range subs {
		p.mu.Lock()
		live := slices.Contains(p.subs, s)
		p.mu.Unlock()
		if !live {
			continue
		}
		// A session owns the body it is handed, as it owns a broker's: each its own.
		body := f.Body
		if i > 0 {
			body = slices.Clone(body)
		}
		s.r.Receive(feed.Delivery{RoutingKey: f.RoutingKey, Body: body, ReceivedAt: f.At})
	}
	return nil
}

// next reads the next delivery that passes the filters, with the sessions it goes to.
func (p *Player) next() (Frame, []*subscription, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.err != nil {
			if errors.Is(p.err, io.EOF) {
				return Frame{}, nil, false, nil
			}
			return Frame{}, nil, false, p.err
		}
		f, err := p.r.Next()
		if err != nil {
			p.err = err
			continue
		}
		p.stats.Read++
		if f.Kind != Delivery {
			continue
		}
		if !p.wanted(&f) {
			p.stats.Skipped++
			continue
		}
		p.stats.Played++
		words := topic.Split(f.RoutingKey)
		var subs []*subscription
		for _, s := range p.subs {
			if slices.ContainsFunc(s.patterns, func(pt topic.Pattern) bool { return pt.MatchWords(words) }) {
				subs = append(subs, s)
			}
		}
		if len(subs) == 0 {
			p.stats.Unrouted++
		}
		p.stats.Handed += int64(len(subs))
		return f, subs, true, nil
	}
}

// wanted applies the options' filters to a delivery.
func (p *Player) wanted(f *Frame) bool {
	o := &p.opts
	if !o.From.IsZero() && f.At.Before(o.From) || !o.To.IsZero() && !f.At.Before(o.To) {
		return false
	}
	if len(o.Events) == 0 && len(o.Types) == 0 {
		return true
	}
	key, err := feed.ParseRoutingKey(f.RoutingKey)
	if err != nil {
		return len(o.Events) == 0 && len(o.Types) == 0
	}
	if len(o.Types) > 0 && !slices.Contains(o.Types, key.Type) {
		return false
	}
	return len(o.Events) == 0 || key.Type.IsSystem() || slices.Contains(o.Events, key.Event)
}

// pace waits, at a Speed other than 0, as long as the recording waited between the last
// delivery and this one, divided by Speed.
func (p *Player) pace(ctx context.Context, at time.Time) error {
	p.mu.Lock()
	prev := p.prev
	p.prev = at
	p.mu.Unlock()
	if p.opts.Speed == 0 || prev.IsZero() || !at.After(prev) {
		return nil
	}
	t := p.clk.NewTimer(time.Duration(float64(at.Sub(prev)) / p.opts.Speed))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns the Player's counts.
func (p *Player) Stats() PlayerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
