package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Chaos kills children at random moments and restarts them at once.
type Chaos struct {
	// Kills is how many kills it makes (a kill of several children at once counts
	// one).
	Kills int
	// MinDelay and MaxDelay bound the random pause before each kill, drawn once every
	// child at work has called Ready again, so that a restarted child works a while
	// before the next kill.
	MinDelay, MaxDelay time.Duration
	// Await, if not nil, is called before each kill, after the pause, with the number
	// of kills made so far: it waits for the moment that kill is meant for, on a signal
	// or the component's state (e.g. until a share of the work drawn at random is
	// done, so that every kill lands under load however fast the machine), and returns
	// ctx's error if ctx ends first.
	Await func(ctx context.Context, kill int) error
	// AllAtOnce is the chance, from 0 to 1, that a kill takes every child at work at
	// the same moment rather than one drawn at random.
	AllAtOnce float64
	// Pick, if not nil, chooses the victim of a kill that takes one child, in place of a
	// random draw: it is given the children at work and returns one of them (e.g. the
	// active one of an active/passive pair, which a random draw would miss half the
	// time).
	Pick func(live []*Process) *Process
	// OnKill, if not nil, is called after each kill, before the victims restart, with
	// the children it killed: e.g. to note what was in progress.
	OnKill func(victims []*Process)
}

// Run makes c.Kills kills among procs, drawing pauses and victims from r: each once
// every child at work has called Ready, then the pause, then Await. It returns
// how many it made: fewer when every child's work ended first (Spec.Finishes), or when
// ctx ended (with ctx's error), or a child exited on its own (with an error naming it).
// The children are left running.
func (c Chaos) Run(ctx context.Context, r *rand.Rand, procs ...*Process) (int, error) {
	kills := 0
	for kills < c.Kills {
		if live, err := c.ready(ctx, procs); err != nil || len(live) == 0 {
			return kills, err
		}
		if err := Pause(ctx, Between(r, c.MinDelay, c.MaxDelay)); err != nil {
			return kills, err
		}
		if c.Await != nil {
			if err := c.Await(ctx, kills); err != nil {
				return kills, err
			}
		}
		live, err := c.ready(ctx, procs) // without those whose work ended meanwhile
		if err != nil || len(live) == 0 {
			return kills, err
		}
		victims := live
		if r.Float64() >= c.AllAtOnce {
			if c.Pick != nil {
				victims = []*Process{c.Pick(live)}
			} else {
				victims = []*Process{live[r.IntN(len(live))]}
			}
		}
		var killed []*Process
		for _, v := range victims {
			if v.Kill() {
				killed = append(killed, v)
			} else if !v.Finished() {
				return kills, fmt.Errorf("%w: %s: %v", errExited, v.Name(), v.Err())
			}
		}
		if len(killed) == 0 {
			continue // it finished its work meanwhile: draw again
		}
		kills++
		if c.OnKill != nil {
			c.OnKill(killed)
		}
		for _, v := range killed {
			v.Restart()
		}
	}
	return kills, nil
}

// ready waits until every child of procs whose work has not ended has called Ready, and
// returns those. A child that exited is told first: its Ready stays closed.
func (c Chaos) ready(ctx context.Context, procs []*Process) ([]*Process, error) {
	var live []*Process
	for _, p := range procs {
		select {
		case <-p.Done():
		default:
			select {
			case <-p.Ready():
				live = append(live, p)
				continue
			case <-p.Done():
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if !p.Finished() {
			return nil, fmt.Errorf("%w: %s: %v", errExited, p.Name(), p.Err())
		}
	}
	return live, nil
}

// Between returns a duration drawn uniformly from [lo, hi) (lo when hi <= lo).
func Between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// Pause waits d, or until ctx ends (with its error). It shapes load, between kills or
// an idle actor's polls; it is no way to wait for something to happen.
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
