package feedkit

import (
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/markets"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/feed/sportdata"
	"github.com/feedkit/feedkit/recovery"
)

// Stats is a snapshot of the SDK's counters, for a host to export: it encodes to JSON
// (json.Marshal) with snake_case names throughout, as the feed's records do. Times are
// RFC 3339 and left out when zero; durations are whole nanoseconds, in fields whose names
// end in _ns; Tasks is keyed by recovery context, "1:live" or "1:42" (producer 1's live
// tasks, or those of its request 42).
type Stats struct {
	Sessions  []feed.SessionStats                                  `json:"sessions"`
	Delivery  []DeliveryStats                                      `json:"delivery"`       // per session
	Pool      *concurrent.PoolStats                                `json:"pool,omitempty"` // the sessions' shared workers; nil with serial delivery
	Recovery  recovery.Stats                                       `json:"recovery"`
	Producers []recovery.ProducerState                             `json:"producers"` // every producer's state, as Producers returns it
	Global    concurrent.GateStats                                 `json:"global"`
	Tasks     map[concurrent.RecoveryContext]concurrent.TaskCounts `json:"tasks"`
	// Transport is the RabbitMQ transport's: connections, reconnection attempts, the last
	// error, messages and bytes received. nil for another transport (a feedtest.Broker).
	Transport *rabbitmq.Stats `json:"transport,omitempty"`
	// API is what the feed's API client did (SDK.API): requests, failures, retries, and
	// requests held after a 429; nil without the API.
	API *feedapi.Stats `json:"api,omitempty"`
	// Names is what the market and outcome names' caches did (SDK.Names); nil without
	// the API.
	Names *markets.Stats `json:"names,omitempty"`
	// SportData is what the sport data's caches did (SDK.SportData); nil without the
	// API.
	SportData *sportdata.Stats `json:"sport_data,omitempty"`
}

// DeliveryStats is what one session's dispatcher did: the concurrent listener's counters
// (the session's own tasks on the shared pool; Stats.Pool has the pool's), or the serial
// dispatcher's. A forwarding session (SDK.AddForwardingSession) has neither: its
// events went to its Forwarder, which keeps its own counts; the session's (Stats.Sessions)
// say what it read, and Stats.Tasks how many of its tickets are finished.
type DeliveryStats struct {
	Concurrent *concurrent.Stats     `json:"concurrent,omitempty"` // nil with serial delivery
	Serial     *feed.DispatcherStats `json:"serial,omitempty"`     // nil with the concurrent listener
	Forwarding bool                  `json:"forwarding,omitempty"` // the session's events go to a Forwarder
}

// Stats returns the SDK's counters. It may be called at any time, from any goroutine,
// listeners included.
func (s *SDK) Stats() Stats {
	s.listMu.Lock()
	sessions, workers, serial, forwarders := s.sessions, s.workers, s.serial, s.forwarders
	s.listMu.Unlock()
	st := Stats{Recovery: s.manager.Stats(), Producers: s.manager.Producers(), Global: s.global.Stats(),
		Tasks: s.tracker.Snapshot(), Transport: transportStats(s.transport)}
	if s.pool != nil {
		ps := s.pool.Stats()
		st.Pool = &ps
	}
	if s.api != nil {
		as := s.api.Stats()
		st.API = &as
	}
	if s.names != nil {
		ns := s.names.Stats()
		st.Names = &ns
	}
	if s.sport != nil {
		ss := s.sport.Stats()
		st.SportData = &ss
	}
	for i, se := range sessions {
		st.Sessions = append(st.Sessions, se.Stats())
		var d DeliveryStats
		switch {
		case workers[i] != nil:
			cs := workers[i].Stats()
			d.Concurrent = &cs
		case serial[i] != nil:
			ss := serial[i].Stats()
			d.Serial = &ss
		default:
			d.Forwarding = forwarders[i] != nil
		}
		st.Delivery = append(st.Delivery, d)
	}
	return st
}
