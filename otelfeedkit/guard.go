package otelfeedkit

import (
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
)

// watchGuard lets one registration of a watch stand at a time: WatchEngine and
// WatchScheduler report one engine's or one scheduler's levels, and a second one
// registered beside it would report the same series twice, one value hiding the other.
type watchGuard struct {
	mu       sync.Mutex
	watching bool
}

// register registers f for insts unless a registration of the guard stands. what names
// the call in the errors, busy says why a second one is refused.
func (g *watchGuard) register(meter metric.Meter, what, busy string, f metric.Callback,
	insts ...metric.Observable) (metric.Registration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.watching {
		return nil, errors.New("otelfeedkit: " + what + ": " + busy)
	}
	reg, err := meter.RegisterCallback(f, insts...)
	if err != nil {
		return nil, fmt.Errorf("otelfeedkit: %s: %w", what, err)
	}
	g.watching = true
	return &guardedRegistration{g: g, reg: reg}, nil
}

// guardedRegistration is register's: unregistering it frees the guard for another.
type guardedRegistration struct {
	embedded.Registration
	g    *watchGuard
	reg  metric.Registration
	once sync.Once
}

// Unregister stops the reports of the watched levels; a second call does nothing.
func (r *guardedRegistration) Unregister() error {
	var err error
	r.once.Do(func() {
		err = r.reg.Unregister()
		r.g.mu.Lock()
		r.g.watching = false
		r.g.mu.Unlock()
	})
	return err
}
