package otelfeedkit

import (
	"maps"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// attrs is one attribute set as the options a measurement takes, built once per label
// key. The option slices are kept whole: passing a stored slice with ... costs nothing,
// where passing one option would build a new slice on the heap at every call (the
// instruments are interfaces, so escape analysis cannot keep it on the stack).
type attrs struct {
	add     []metric.AddOption
	record  []metric.RecordOption
	observe []metric.ObserveOption
}

// newAttrs makes the attribute set of kv and its options.
func newAttrs(kv ...attribute.KeyValue) attrs {
	o := metric.WithAttributeSet(attribute.NewSet(kv...))
	return attrs{add: []metric.AddOption{o}, record: []metric.RecordOption{o}, observe: []metric.ObserveOption{o}}
}

// cache maps a small comparable key (the labels of one call, as the SDK gives them) to
// what it resolves to: attribute sets and their options.
//
// Reads take no lock: the map is replaced whole when a key is added (copy on write).
// Keys are few (sessions, producers, message types, pools, results) and come early, so
// the copies stop soon, and a read costs one atomic load and one map lookup, with no
// allocation.
type cache[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex // serialises the writers
}

// lookup returns k's value, if it was added.
func (c *cache[K, V]) lookup(k K) (V, bool) {
	if p := c.m.Load(); p != nil {
		v, ok := (*p)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// get returns k's value, resolving it on k's first call. A caller on the hot path uses
// lookup first and calls get only on a miss, so that the closure it passes is built
// only then.
func (c *cache[K, V]) get(k K, resolve func() V) V {
	if v, ok := c.lookup(k); ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[K]V
	if p := c.m.Load(); p != nil {
		old = *p
	}
	if v, ok := old[k]; ok { // another writer added it meanwhile
		return v
	}
	v := resolve()
	m := make(map[K]V, len(old)+1)
	maps.Copy(m, old)
	m[k] = v
	c.m.Store(&m)
	return v
}
