package concurrent_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// hookLog records what the tracker's call hooks are told, with the counts of the
// message's context at that moment: each message of these tests has a context of its
// own ({1, seq+1}), so its task must be started and not yet completed.
type hookLog struct {
	tracker  *concurrent.TaskLifecycleTracker
	mu       sync.Mutex
	returned []string
	failed   []string
	early    []string // hooks told after the task had completed, or before it started
}

func (h *hookLog) note(to *[]string, hd *feed.Header, what string) {
	c := h.tracker.Counts(concurrent.RecoveryContext{Producer: hd.Producer, RequestID: hd.RequestID})
	h.mu.Lock()
	defer h.mu.Unlock()
	*to = append(*to, what)
	if c.Started != 1 || c.Completed != 0 {
		h.early = append(h.early, fmt.Sprintf("%s: %+v", what, c))
	}
}

func (h *hookLog) sorted(s []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// The tracker's call hooks hear of every listener call for an event message, on either
// dispatcher, before the call's task completes: OnCallReturned of those that returned
// (with an error or without), OnCallFailed of those that returned an error or panicked;
// an unparsable message is told to neither. Hooks set after the dispatcher was made count
// from then on.
func TestCallHooksHearEveryCallBeforeItsTaskCompletes(t *testing.T) {
	// A dispatcher's Close waits for every task it was given, so the test closes it
	// before counting what the listener and the hooks were told.
	type dispatchFunc func(context.Context, feed.Message, bool) error
	type closer interface{ Close(context.Context) error }
	type dispatcher struct {
		name string
		make func(t *testing.T, l feed.OddsFeedListener, tr *concurrent.TaskLifecycleTracker) (dispatchFunc, closer)
	}
	raw := func(d feed.Dispatcher) dispatchFunc {
		return func(ctx context.Context, m feed.Message, broken bool) error {
			ev := rawEvent(t, m)
			if broken {
				ev.Body = []byte("<bet_stop")
			}
			return d.Dispatch(ctx, ev)
		}
	}
	for _, d := range []dispatcher{
		{"serial", func(t *testing.T, l feed.OddsFeedListener, tr *concurrent.TaskLifecycleTracker) (dispatchFunc, closer) {
			s := newSerial(t, l, tr, concurrent.SerialConfig{})
			return raw(s), s
		}},
		{"concurrent", func(t *testing.T, l feed.OddsFeedListener, tr *concurrent.TaskLifecycleTracker) (dispatchFunc, closer) {
			c, err := concurrent.NewDispatcher(l, tr, concurrent.Config{Threads: 4})
			require.NoError(t, err)
			return raw(c), c
		}},
		{"concurrent, decoded messages", func(t *testing.T, l feed.OddsFeedListener, tr *concurrent.TaskLifecycleTracker) (dispatchFunc, closer) {
			c, err := concurrent.NewDispatcher(l, tr, concurrent.Config{Threads: 4})
			require.NoError(t, err)
			return func(ctx context.Context, m feed.Message, broken bool) error {
				if broken {
					return c.OnUnparsableMessage(ctx, &feed.UnparsableMessage{Event: m.MessageHeader().Event, Body: []byte("<bet_stop")})
				}
				return feed.Call(ctx, c, m)
			}, c
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			tracker := concurrent.NewTaskLifecycleTracker()
			rec := feedtest.NewRecorder()
			rec.Hook = func(m feed.Message) error {
				switch seq(m) % 3 {
				case 1:
					return errors.New("refused")
				case 2:
					panic("listener bug")
				}
				return nil
			}
			dispatch, dispatcher := d.make(t, rec, tracker)
			log := &hookLog{tracker: tracker}
			tracker.OnCallReturned(func(h *feed.Header) { log.note(&log.returned, h, fmt.Sprint(h.RequestID-1)) })
			tracker.OnCallFailed(func(h *feed.Header, typ feed.MessageType) {
				log.note(&log.failed, h, fmt.Sprintf("%d %s", h.RequestID-1, typ))
			})
			ctx := testContext(t)
			const n = 30
			var wantReturned, wantFailed []string
			for i := range n {
				typ := eventTypes[i%len(eventTypes)]
				require.NoError(t, dispatch(ctx, message(typ, match(i%5), 1, int64(i+1), i), false))
				if i%3 != 2 {
					wantReturned = append(wantReturned, fmt.Sprint(i))
				}
				if i%3 != 0 {
					wantFailed = append(wantFailed, fmt.Sprintf("%d %s", i, typ))
				}
			}
			require.NoError(t, dispatch(ctx, message(feed.MessageBetStop, match(0), 1, 1000, n), true))
			// The unparsable message of the decoded path has no recovery context to wait
			// on: closing the dispatcher waits for it and for every other task.
			require.NoError(t, dispatcher.Close(ctx))
			for i := range n {
				assert.Zero(t, tracker.Pending(concurrent.RecoveryContext{Producer: 1, RequestID: int64(i + 1)}), "message %d's task", i)
			}
			sort.Strings(wantReturned)
			sort.Strings(wantFailed)
			assert.Equal(t, wantReturned, log.sorted(log.returned), "OnCallReturned: the calls that returned")
			assert.Equal(t, wantFailed, log.sorted(log.failed), "OnCallFailed: the calls that failed or panicked")
			assert.Empty(t, log.sorted(log.early), "every hook is told while its task runs")
			assert.Equal(t, n/3+1, rec.Len(), "the calls that succeeded, and the unparsable message")
		})
	}
}
