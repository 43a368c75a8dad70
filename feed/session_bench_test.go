package feed

import (
	"context"
	"testing"
)

// BenchmarkSessionReceive measures the work of the transport's reading goroutine per
// message: the session's routing of one delivery (routing key, peek, counters) to a
// dispatcher that takes it and does nothing. It is the per-message path an Observer adds
// to; with a nil Observer it must cost what it cost without one.
func BenchmarkSessionReceive(b *testing.B) { benchmarkReceive(b, nil) }

// BenchmarkSessionReceiveObserved is BenchmarkSessionReceive with an Observer that does
// nothing: the cost of the calls themselves.
func BenchmarkSessionReceiveObserved(b *testing.B) { benchmarkReceive(b, nopObserver{}) }

func benchmarkReceive(b *testing.B, obs Observer) {
	body := readFixture(b, "odds_change_1k.xml")
	const key = "hi.-.live.odds_change.1.sr:match.16470657.-"
	s, err := NewSession(nopTransport{}, SessionConfig{Dispatcher: nopDispatcher{}, Observer: obs})
	if err != nil {
		b.Fatal(err)
	}
	r := receiver{s}
	d := Delivery{RoutingKey: key, Body: body}
	b.ReportAllocs()
	for b.Loop() {
		r.Receive(d)
	}
	if got := s.Stats().Events; got != uint64(b.N) {
		b.Fatalf("%d events routed, want %d", got, b.N)
	}
}

type nopTransport struct{}

func (nopTransport) Subscribe(context.Context, []string, Receiver) (Subscription, error) {
	return nil, nil
}

type nopDispatcher struct{}

func (nopDispatcher) Dispatch(context.Context, Event) error { return nil }
func (nopDispatcher) Close(context.Context) error           { return nil }

type nopObserver struct{}

func (nopObserver) FeedMessageReceived(SessionRef, int, MessageType, int) {}
func (nopObserver) FeedMessageUnparsable(SessionRef, int, MessageType)    {}
