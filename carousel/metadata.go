package carousel

import (
	"encoding/json"
	"time"
)

// State is one of the states a cycle can be in. A cycle is in exactly one of Starting,
// Running, Stopped and CoolDown, and may be Unhealthy as well.
type State string

const (
	// Starting: preparing its first iteration after being started.
	Starting State = "starting"
	// Running: publishing an iteration.
	Running State = "running"
	// Stopped: not publishing; it needs to be started or resumed.
	Stopped State = "stopped"
	// CoolDown: waiting between iterations because the last one had nothing to publish.
	CoolDown State = "cooldown"
	// Unhealthy: the source failed; the cycle retries with backoff (or stops, if so
	// configured). It accompanies one of the other states.
	Unhealthy State = "unhealthy"
)

// CycleMetadata is a cycle's progress: what the operator API shows and what a
// MetadataStore saves, so that a restarted cycle skips the items it completed.
type CycleMetadata struct {
	// CycleID is the cycle's id (its name).
	CycleID string `json:"cycleId"`
	// Config is the configuration the progress was made under; progress saved under a
	// config that selects other items is ignored at restore.
	Config CycleConfig `json:"config"`
	// Iteration counts the cycle's iterations, from 1 for the first.
	Iteration int `json:"iteration"`
	// Total is the number of items of the current iteration, counted at its start (and
	// again when it resumes), and raised by the items added meanwhile that it publishes.
	Total int `json:"total"`
	// Completed is the number of items of the current iteration republished or failed;
	// it never exceeds Total, whatever metadata the iteration resumed from.
	Completed int `json:"completed"`
	// Errors counts the current iteration's items that failed to republish.
	Errors int `json:"errors"`
	// CurrentItem is the id of the item being republished or last republished.
	CurrentItem string `json:"currentItem,omitempty"`
	// Last is the last item completed; a resumed iteration continues after it. Progress
	// without it (a count only, as the Financial Times' publish-carousel saves it)
	// resumes after the first Completed items in the iteration's order.
	Last Item `json:"last"`
	// WindowStart and WindowEnd bound the current window of a windowed cycle.
	WindowStart time.Time `json:"windowStart,omitzero"`
	WindowEnd   time.Time `json:"windowEnd,omitzero"`
	// InProgress is set while the current iteration has begun and not ended: a restart
	// resumes it, in its window, after Last.
	InProgress bool `json:"inProgress"`
	// IterationStart is when the current iteration began; IterationEnd when the last
	// one ended (zero before the first ended).
	IterationStart time.Time `json:"iterationStart,omitzero"`
	IterationEnd   time.Time `json:"iterationEnd,omitzero"`
	// Throttle is the interval between publishes the current iteration uses.
	Throttle time.Duration `json:"-"`
	// States are the cycle's states: one of Starting, Running, Stopped, CoolDown, then
	// Unhealthy when it is.
	States []State `json:"states"`
	// LastError is the last source or publish error, for the operator.
	LastError string `json:"lastError,omitempty"`
	// UpdatedAt is when the metadata last changed.
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// Progress returns the fraction of the current iteration completed, in [0, 1].
func (m CycleMetadata) Progress() float64 {
	if m.Total <= 0 {
		return 0
	}
	p := float64(m.Completed) / float64(m.Total)
	return min(max(p, 0), 1)
}

// Has reports whether s is one of m's states.
func (m CycleMetadata) Has(s State) bool {
	for _, x := range m.States {
		if x == s {
			return true
		}
	}
	return false
}

// metadataJSON is CycleMetadata's JSON: its fields, the derived Progress, Throttle as a
// duration string, and Config in its wire form, which shadows the embedded one so that
// reading does not validate it.
type metadataJSON struct {
	cycleMetadataFields
	Config   wireCycle `json:"config"`
	Progress float64   `json:"progress"`
	Throttle string    `json:"throttle,omitempty"`
	// InProgress shadows the embedded field so that reading can tell it absent:
	// publish-carousel's metadata has none.
	InProgress *bool `json:"inProgress"`
}

// cycleMetadataFields has CycleMetadata's fields without its methods, so that encoding it
// does not recurse into MarshalJSON.
type cycleMetadataFields CycleMetadata

// MarshalJSON writes m's fields, its Progress, and Throttle as a duration string.
func (m CycleMetadata) MarshalJSON() ([]byte, error) {
	w := metadataJSON{cycleMetadataFields: cycleMetadataFields(m), Config: toWire(m.Config), Progress: m.Progress(),
		InProgress: &m.InProgress}
	if m.Throttle > 0 {
		w.Throttle = m.Throttle.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes; Progress is derived, not read. The config
// is read as saved, not validated: metadata is progress, and a config that today's rules
// refuse (saved by another version) must not make it unreadable; restore decides whether
// it fits the cycle. Only a duration that does not parse is an error, named.
//
// It reads the metadata of the Financial Times' publish-carousel too, which has no
// inProgress and no last item: publish-carousel saves its progress at shutdown, and any
// completed count is that of the iteration it was running, so InProgress is then
// Completed > 0, and the cycle resumes by count.
func (m *CycleMetadata) UnmarshalJSON(b []byte) error {
	var w metadataJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	cfg, err := w.Config.parse("config.")
	if err != nil {
		return err
	}
	*m = CycleMetadata(w.cycleMetadataFields)
	m.Config = cfg
	if w.InProgress != nil {
		m.InProgress = *w.InProgress
	} else {
		m.InProgress = m.Completed > 0
	}
	if w.Throttle != "" {
		d, err := time.ParseDuration(w.Throttle)
		if err != nil {
			return &FieldError{Field: "throttle", Value: w.Throttle, Problem: "is not a duration"}
		}
		m.Throttle = d
	}
	return nil
}

// clone returns a copy of m that shares nothing with it.
func (m CycleMetadata) clone() CycleMetadata {
	m.States = append([]State(nil), m.States...)
	return m
}
