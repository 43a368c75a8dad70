package locks

import "sync"

// Latest is the receiver's rule (see the package documentation, "What a receiver
// sees") for a receiver written in Go: of each sensor it keeps the notification with
// the highest Sequence it has been given, so that what it keeps is the newest news of
// the sensor it has been told, whatever order the notifications arrived in. The zero
// Latest is ready to use, and safe for concurrent use.
//
// Latest keeps in memory: a receiver that must remember across its restarts keeps each
// sensor's sequence where it keeps the sensor's state, and compares the two in the
// same transaction that writes them.
type Latest struct {
	mu sync.Mutex
	of map[SensorID]Body
}

// Keep keeps b if its Sequence is higher than that of the notification kept of its
// sensor, or if none is, and reports whether it did. A notification Keep refuses is
// older news than what is kept (it arrived after a newer one) or the same (a retry of
// one kept already, or a duplicate): the receiver drops it.
func (l *Latest) Keep(b Body) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kept, ok := l.of[b.SensorID]; ok && b.Sequence <= kept.Sequence {
		return false
	}
	if l.of == nil {
		l.of = map[SensorID]Body{}
	}
	l.of[b.SensorID] = b
	return true
}

// Get returns the notification kept of the sensor, and whether there is one.
func (l *Latest) Get(id SensorID) (Body, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.of[id]
	return b, ok
}
