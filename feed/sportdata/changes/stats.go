package changes

// Stats counts what a Manager did since it was made.
type Stats struct {
	Polls            uint64 `json:"polls"`             // polls of both lists: Run's, one per Interval, and Poll's
	Requests         uint64 `json:"requests"`          // requests of a list
	RequestErrors    uint64 `json:"request_errors"`    // requests that failed, or whose answer was not a changes list
	Delivered        uint64 `json:"delivered"`         // changes the listener took
	AlreadyDelivered uint64 `json:"already_delivered"` // changes listed again after they were delivered, not delivered again
	ListenerErrors   uint64 `json:"listener_errors"`   // listener calls that failed or panicked; their change is offered again
	StoreErrors      uint64 `json:"store_errors"`      // loads and saves of the Store that failed
}

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}
