package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/recording"
	"github.com/feedkit/feedkit/recovery"
)

// replay plays a recording through the SDK with a listener that prints each call.
func replay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	speed := fs.Float64("speed", 0, "N times the recorded pace; 0 as fast as the listener takes it")
	var only events
	fs.Var(&only, "event", "play this event's messages (repeatable), with the system messages")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	f, err := source(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := recording.NewPlayer(f, recording.PlayerOptions{Speed: *speed, Events: only})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	l := &printer{w: stdout}
	sdk, err := feedkit.New(feedkit.Config{Transport: p, Node: feed.Node(1), Recovery: recovery.Config{Disabled: true}})
	if err != nil {
		return err
	}
	if err := sdk.AddSession(feed.AllMessages, l); err != nil {
		return err
	}
	if err := sdk.Open(ctx); err != nil {
		return err
	}
	playErr := p.Play(ctx)
	if err := sdk.Flush(ctx); err != nil && playErr == nil {
		playErr = err
	}
	closeErr := sdk.Close(context.WithoutCancel(ctx))
	st := p.Stats()
	fmt.Fprintf(stdout, "played %d of %d frames\n", st.Played, st.Read)
	if playErr != nil {
		return fmt.Errorf("%s: %w", path, playErr)
	}
	return closeErr
}

// printer is the listener of a replay: a line per call.
type printer struct {
	feed.BaseOddsFeedListener
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) print(m feed.Message) error {
	h := m.MessageHeader()
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintf(p.w, "%s  %-24s  %s  producer %d\n", h.ReceivedAt.Format("15:04:05.000"), m.Type(), h.Event, h.Producer)
	return err
}

func (p *printer) OnOddsChange(_ context.Context, m *feed.OddsChange) error       { return p.print(m) }
func (p *printer) OnBetStop(_ context.Context, m *feed.BetStop) error             { return p.print(m) }
func (p *printer) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error { return p.print(m) }
func (p *printer) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return p.print(m)
}
func (p *printer) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return p.print(m) }
func (p *printer) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return p.print(m)
}
func (p *printer) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error { return p.print(m) }
