package recovery

import "time"

// Stats counts what a Manager did.
type Stats struct {
	Alives              uint64 `json:"alives"`                // alive messages processed
	DuplicateAlives     uint64 `json:"duplicate_alives"`      // copies of an alive from another session, dropped
	Unsubscribed        uint64 `json:"unsubscribed"`          // alives with subscribed=0
	Disconnections      uint64 `json:"disconnections"`        // healthy producers disconnected (alives missing or late, connection lost, RecoverProducer)
	ConnectionDowns     uint64 `json:"connection_downs"`      // connection losses reported
	RecoveriesRequested uint64 `json:"recoveries_requested"`  // requests the API accepted
	RecoveriesCompleted uint64 `json:"recoveries_completed"`  // recoveries ended by their snapshot_complete
	RecoveriesSkipped   uint64 `json:"recoveries_skipped"`    // recoveries skipped because recoveries are disabled
	RecoveryTimeouts    uint64 `json:"recovery_timeouts"`     // recoveries whose snapshot_complete did not come in time
	RecoveriesForced    uint64 `json:"recoveries_forced"`     // producers taken down, or recoveries restarted, by RecoverProducer
	RequestsRateLimited uint64 `json:"requests_rate_limited"` // requests postponed by the rate limits
	RequestsFailed      uint64 `json:"requests_failed"`       // requests the API or the ledger failed
	SnapshotsIgnored    uint64 `json:"snapshots_ignored"`     // snapshot_complete messages of another request
	DelayViolations     uint64 `json:"delay_violations"`      // times live messages were found processed too late
	StatusChanges       uint64 `json:"status_changes"`        // status changes told to the listener
	Malformed           uint64 `json:"malformed"`             // system messages that could not be decoded
	UnknownProducer     uint64 `json:"unknown_producer"`      // system messages of producers not followed (not listed, or inactive for the account)
	DisabledProducer    uint64 `json:"disabled_producer"`     // system messages of producers in Config.DisabledProducers
	ListenerFailures    uint64 `json:"listener_failures"`     // listener calls that failed or panicked (ListenerFailed)
	Holds               uint64 `json:"holds"`                 // times a failed call began to hold a recovery point
	HoldsReplayed       uint64 `json:"holds_replayed"`        // holds released by a recovery that replayed their message
	HoldsGivenUp        uint64 `json:"holds_given_up"`        // holds released because their message left the recovery window (HoldGivenUpError)
	DriftWarnings       uint64 `json:"drift_warnings"`        // times the feed's clock was found more than 5 s from ours

	EventRecoveriesRequested uint64 `json:"event_recoveries_requested"` // event recoveries the API accepted (RecoverEvent)
	EventRecoveriesCompleted uint64 `json:"event_recoveries_completed"` // event recoveries ended by their snapshot_complete
	EventRecoveryTimeouts    uint64 `json:"event_recovery_timeouts"`    // event recoveries whose snapshot_complete did not come in time
}

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// ProducerState is what the manager knows of a producer at one moment. It encodes to
// JSON in snake_case, as Record does, with its times in RFC 3339 and ClockDrift in
// nanoseconds (clock_drift_ns).
type ProducerState struct {
	Record
	// Up is what the customer was last told: healthy and processed in time.
	Up bool `json:"up"`
	// Delayed reports live messages processed later than Config.MaxProcessingDelay.
	Delayed bool `json:"delayed"`
	// RecoveryPending reports a recovery that must be requested and has not been accepted
	// yet; RetryAt is when it is tried next, if it is waiting.
	RecoveryPending bool      `json:"recovery_pending"`
	RetryAt         time.Time `json:"retry_at,omitzero"`
	// Hold is the failed message holding the recovery point (LastSubscribedAt) at or
	// before its timestamp; nil when none.
	Hold *Hold `json:"hold,omitempty"`
	// ClockDrift is our clock minus the feed's at the last alive: how late the feed's
	// timestamps run (negative: ahead), broker and consumer backlog included.
	ClockDrift time.Duration `json:"clock_drift_ns"`
	// HeartbeatLimit is the longest silence allowed between the producer's alives
	// (its own, or Config.HeartbeatLimits').
	HeartbeatLimit time.Duration `json:"heartbeat_limit_ns"`
	// LastAliveAt is when the producer's last alive was received, on the manager's
	// clock; zero before the first.
	LastAliveAt time.Time `json:"last_alive_at,omitzero"`
}

// Producers returns the state of every producer followed, in the order of its list
// (Config.ProducerSource's, or Config.Producers).
func (m *Manager) Producers() []ProducerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ProducerState, 0, len(m.order))
	for _, p := range m.order {
		st := ProducerState{Record: p.rec, Up: p.up, Delayed: p.delayed,
			RecoveryPending: p.needs || p.inFlight != 0, RetryAt: p.retryAt, ClockDrift: p.drift, HeartbeatLimit: p.limit,
			LastAliveAt: p.aliveAt}
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
