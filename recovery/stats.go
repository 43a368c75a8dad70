package recovery

import "time"

// Stats counts what a Manager did.
type Stats struct {
	Alives              uint64 // alive messages processed
	DuplicateAlives     uint64 // copies of an alive from another session, dropped
	Unsubscribed        uint64 // alives with subscribed=0
	Disconnections      uint64 // healthy producers disconnected (alives missing or late, connection lost)
	ConnectionDowns     uint64 // connection losses reported
	RecoveriesRequested uint64 // requests the API accepted
	RecoveriesCompleted uint64 // recoveries ended by their snapshot_complete
	RecoveriesSkipped   uint64 // recoveries skipped because recoveries are disabled
	RecoveryTimeouts    uint64 // recoveries whose snapshot_complete did not come in time
	RequestsRateLimited uint64 // requests postponed by the rate limits
	RequestsFailed      uint64 // requests the API or the ledger failed
	SnapshotsIgnored    uint64 // snapshot_complete messages of another request
	DelayViolations     uint64 // times live messages were found processed too late
	StatusChanges       uint64 // status changes told to the listener
	Malformed           uint64 // system messages that could not be decoded
	UnknownProducer     uint64 // system messages of producers not followed (not listed, or inactive for the account)
	DisabledProducer    uint64 // system messages of producers in Config.DisabledProducers
	ListenerFailures    uint64 // listener calls that failed or panicked (ListenerFailed)
	Holds               uint64 // times a failed call began to hold a recovery point
	HoldsReplayed       uint64 // holds released by a recovery that replayed their message
	HoldsGivenUp        uint64 // holds released because their message left the recovery window (HoldGivenUpError)
	DriftWarnings       uint64 // times the feed's clock was found more than 5 s from ours
}

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// ProducerState is what the manager knows of a producer at one moment.
type ProducerState struct {
	Record
	// Up is what the customer was last told: healthy and processed in time.
	Up bool
	// Delayed reports live messages processed later than Config.MaxProcessingDelay.
	Delayed bool
	// RecoveryPending reports a recovery that must be requested and has not been accepted
	// yet; RetryAt is when it is tried next, if it is waiting.
	RecoveryPending bool
	RetryAt         time.Time
	// Hold is the failed message holding the recovery point (LastSubscribedAt) at or
	// before its timestamp; nil when none.
	Hold *Hold
	// ClockDrift is our clock minus the feed's at the last alive: how late the feed's
	// timestamps run (negative: ahead), broker and consumer backlog included.
	ClockDrift time.Duration
}

// Producers returns the state of every producer followed, in the order of its list
// (Config.Producers, or the list given to OpenWithProducers).
func (m *Manager) Producers() []ProducerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ProducerState, 0, len(m.order))
	for _, p := range m.order {
		st := ProducerState{Record: p.rec, Up: p.up, Delayed: p.delayed,
			RecoveryPending: p.needs || p.inFlight != 0, RetryAt: p.retryAt, ClockDrift: p.drift}
		if p.hold != nil {
			h := *p.hold
			st.Hold = &h
		}
		out = append(out, st)
	}
	return out
}

// Producer returns the state of producer id.
func (m *Manager) Producer(id int) (ProducerState, bool) {
	for _, s := range m.Producers() {
		if s.Producer == id {
			return s, true
		}
	}
	return ProducerState{}, false
}
