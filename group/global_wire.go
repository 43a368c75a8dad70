package group

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// globalKind names the feed.GlobalEventsListener method a global event is for.
type globalKind string

// The kinds of global event, one per method of feed.GlobalEventsListener.
const (
	globalProducerStatus         globalKind = "producer_status"          // OnProducerStatusChange
	globalRecoveryInitiated      globalKind = "recovery_initiated"       // OnRecoveryInitiated
	globalEventRecoveryCompleted globalKind = "event_recovery_completed" // OnEventRecoveryCompleted
	globalConnectionDown         globalKind = "connection_down"          // OnConnectionDown
	globalConnectionUp           globalKind = "connection_up"            // OnConnectionUp
	// globalStatuses is every producer's last status the group was told, sent at an
	// interval so that a worker that connected after a change learns it: each worker
	// passes on only the statuses that differ from the last it passed on.
	globalStatuses globalKind = "producer_statuses"
)

// globalEvent is one call of a feed.GlobalEventsListener, as the ingress publishes it to
// the control exchange (the body of a KindGlobal message) for every worker to pass to the
// application's listener: Kind names the method, and the field of that method holds its
// argument (the others are zero).
type globalEvent struct {
	Kind      globalKind
	Status    feed.ProducerStatus         // producer_status
	Recovery  feed.RecoveryInitiated      // recovery_initiated
	Completed feed.EventRecoveryCompleted // event_recovery_completed
	Session   feed.SessionRef             // connection_down, connection_up
	Err       error                       // connection_down; travels as its text
	Statuses  []feed.ProducerStatus       // producer_statuses
}

// The JSON of a global event: a field per kind, named after it, beside "kind".
type (
	globalWire struct {
		Kind      globalKind     `json:"kind"`
		Status    *statusWire    `json:"producer_status,omitempty"`
		Recovery  *recoveryWire  `json:"recovery_initiated,omitempty"`
		Completed *completedWire `json:"event_recovery_completed,omitempty"`
		Session   *sessionWire   `json:"session,omitempty"`
		Error     string         `json:"error,omitempty"`
		Statuses  []*statusWire  `json:"producer_statuses,omitempty"`
	}
	statusWire struct {
		Producer  int               `json:"producer"`
		Down      bool              `json:"down,omitempty"`
		Delayed   bool              `json:"delayed,omitempty"`
		Reason    feed.StatusReason `json:"reason"`
		Timestamp time.Time         `json:"timestamp,omitzero"`
		Session   *sessionWire      `json:"session,omitempty"`
	}
	recoveryWire struct {
		Producer  int               `json:"producer"`
		RequestID int64             `json:"request_id"`
		Kind      feed.RecoveryKind `json:"kind"`
		After     time.Time         `json:"after,omitzero"`
		Event     feed.URN          `json:"event,omitzero"`
	}
	completedWire struct {
		Producer  int      `json:"producer"`
		Event     feed.URN `json:"event"`
		RequestID int64    `json:"request_id"`
	}
	// sessionWire is a feed.SessionRef: its index, and its interest by the short name
	// of SessionRef.Label, with the events of a SpecifiedMatchesOnly one.
	sessionWire struct {
		Index    int        `json:"index"`
		Interest string     `json:"interest"`
		Events   []feed.URN `json:"events,omitempty"`
	}
)

// interestsByName are the message interestsByName by the short names of SessionRef.Label, but for
// "matches" (SpecifiedMatchesOnly), which has events.
var interestsByName = map[string]feed.MessageInterest{
	"all":      feed.AllMessages,
	"live":     feed.LiveMessagesOnly,
	"prematch": feed.PrematchMessagesOnly,
	"hi":       feed.HiPriorityMessagesOnly,
	"lo":       feed.LoPriorityMessagesOnly,
	"virtual":  feed.VirtualSportMessagesOnly,
}

func sessionToWire(s feed.SessionRef) *sessionWire {
	_, name, _ := strings.Cut(s.Label(), ":")
	return &sessionWire{Index: s.Index, Interest: name, Events: s.Interest.Events()}
}

func (w *sessionWire) session() (feed.SessionRef, error) {
	if w == nil {
		return feed.SessionRef{}, errors.New("no session")
	}
	if w.Interest == "matches" {
		return feed.SessionRef{Index: w.Index, Interest: feed.SpecifiedMatchesOnly(w.Events...)}, nil
	}
	mi, ok := interestsByName[w.Interest]
	if !ok {
		return feed.SessionRef{}, fmt.Errorf("unknown interest %q", w.Interest)
	}
	return feed.SessionRef{Index: w.Index, Interest: mi}, nil
}

func statusToWire(s feed.ProducerStatus) *statusWire {
	w := &statusWire{Producer: s.Producer, Down: s.Down, Delayed: s.Delayed, Reason: s.Reason, Timestamp: s.Timestamp}
	if s.Session != nil {
		w.Session = sessionToWire(*s.Session)
	}
	return w
}

func (w *statusWire) status() (feed.ProducerStatus, error) {
	s := feed.ProducerStatus{Producer: w.Producer, Down: w.Down, Delayed: w.Delayed, Reason: w.Reason, Timestamp: w.Timestamp}
	if w.Session != nil {
		ref, err := w.Session.session()
		if err != nil {
			return s, err
		}
		s.Session = &ref
	}
	return s, nil
}

// encodeGlobal returns the JSON body of ev, for a KindGlobal message.
func encodeGlobal(ev globalEvent) ([]byte, error) {
	w := globalWire{Kind: ev.Kind}
	switch ev.Kind {
	case globalProducerStatus:
		w.Status = statusToWire(ev.Status)
	case globalStatuses:
		for _, s := range ev.Statuses {
			w.Statuses = append(w.Statuses, statusToWire(s))
		}
	case globalRecoveryInitiated:
		r := ev.Recovery
		w.Recovery = &recoveryWire{Producer: r.Producer, RequestID: r.RequestID, Kind: r.Kind, After: r.After, Event: r.Event}
	case globalEventRecoveryCompleted:
		c := ev.Completed
		w.Completed = &completedWire{Producer: c.Producer, Event: c.Event, RequestID: c.RequestID}
	case globalConnectionDown:
		w.Session = sessionToWire(ev.Session)
		if ev.Err != nil {
			w.Error = ev.Err.Error()
		}
	case globalConnectionUp:
		w.Session = sessionToWire(ev.Session)
	default:
		return nil, fmt.Errorf("group: encoding a global event of unknown kind %q", ev.Kind)
	}
	return json.Marshal(w)
}

// ErrBadGlobal is wrapped by the error of a global event whose body does not decode.
var ErrBadGlobal = errors.New("group: a global event that does not decode")

// decodeGlobal reads back what encodeGlobal wrote. A connection_down's error comes back
// as an error with the same text.
func decodeGlobal(body []byte) (globalEvent, error) {
	var w globalWire
	if err := json.Unmarshal(body, &w); err != nil {
		return globalEvent{}, fmt.Errorf("%w: %w", ErrBadGlobal, err)
	}
	ev := globalEvent{Kind: w.Kind}
	missing := func(field string) (globalEvent, error) {
		return globalEvent{}, fmt.Errorf("%w: a %s without %s", ErrBadGlobal, w.Kind, field)
	}
	switch w.Kind {
	case globalProducerStatus:
		if w.Status == nil {
			return missing("producer_status")
		}
		st, err := w.Status.status()
		if err != nil {
			return globalEvent{}, fmt.Errorf("%w: %s: %w", ErrBadGlobal, w.Kind, err)
		}
		ev.Status = st
	case globalStatuses:
		for _, sw := range w.Statuses {
			if sw == nil {
				return missing("a status")
			}
			st, err := sw.status()
			if err != nil {
				return globalEvent{}, fmt.Errorf("%w: %s: %w", ErrBadGlobal, w.Kind, err)
			}
			ev.Statuses = append(ev.Statuses, st)
		}
	case globalRecoveryInitiated:
		r := w.Recovery
		if r == nil {
			return missing("recovery_initiated")
		}
		ev.Recovery = feed.RecoveryInitiated{Producer: r.Producer, RequestID: r.RequestID, Kind: r.Kind, After: r.After, Event: r.Event}
	case globalEventRecoveryCompleted:
		c := w.Completed
		if c == nil {
			return missing("event_recovery_completed")
		}
		ev.Completed = feed.EventRecoveryCompleted{Producer: c.Producer, Event: c.Event, RequestID: c.RequestID}
	case globalConnectionDown, globalConnectionUp:
		ref, err := w.Session.session()
		if err != nil {
			return globalEvent{}, fmt.Errorf("%w: %s: %w", ErrBadGlobal, w.Kind, err)
		}
		ev.Session = ref
		if w.Kind == globalConnectionDown && w.Error != "" {
			ev.Err = errors.New(w.Error)
		}
	default:
		return globalEvent{}, fmt.Errorf("%w: unknown kind %q", ErrBadGlobal, w.Kind)
	}
	return ev, nil
}

// deliverGlobal decodes body and calls the method of l it is for; it returns the decode
// error, and calls nothing then. A producer's status is passed on only when news says
// it differs from the last one passed on (nil news passes every one).
func deliverGlobal(ctx context.Context, l feed.GlobalEventsListener, body []byte, news func(feed.ProducerStatus) bool) error {
	ev, err := decodeGlobal(body)
	if err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	switch ev.Kind {
	case globalProducerStatus:
		if news == nil || news(ev.Status) {
			l.OnProducerStatusChange(ctx, ev.Status)
		}
	case globalStatuses:
		for _, s := range ev.Statuses {
			if news == nil || news(s) {
				l.OnProducerStatusChange(ctx, s)
			}
		}
	case globalRecoveryInitiated:
		l.OnRecoveryInitiated(ctx, ev.Recovery)
	case globalEventRecoveryCompleted:
		l.OnEventRecoveryCompleted(ctx, ev.Completed)
	case globalConnectionDown:
		l.OnConnectionDown(ctx, ev.Session, ev.Err)
	case globalConnectionUp:
		l.OnConnectionUp(ctx, ev.Session)
	}
	return nil
}

// statusMemory is a worker's last status passed on of each producer.
type statusMemory struct {
	mu   sync.Mutex
	last map[int]feed.ProducerStatus
}

// news records s and reports whether it differs from the producer's last status.
func (m *statusMemory) news(s feed.ProducerStatus) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[int]feed.ProducerStatus{}
	}
	old, ok := m.last[s.Producer]
	if ok && old.Down == s.Down && old.Delayed == s.Delayed && old.Reason == s.Reason && old.Timestamp.Equal(s.Timestamp) {
		return false
	}
	m.last[s.Producer] = s
	return true
}
