package promfeedkit

import (
	"maps"
	"sync"
	"sync/atomic"
)

// children maps a small comparable key (the labels of one call, as the SDK gives them)
// to the metric children it resolves to. The observer methods that run once per message
// read it instead of calling a vector's WithLabelValues, which hashes the label values
// and takes the vector's lock on every call.
//
// Reads take no lock: the map is replaced whole when a key is added (copy on write).
// Keys are few (producers, message types, sessions, pools) and come early, so the copies
// stop soon, and a read costs one atomic load and one map lookup, with no allocation.
type children[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex // serialises the writers
}

func newChildren[K comparable, V any]() *children[K, V] {
	c := &children[K, V]{}
	c.m.Store(&map[K]V{})
	return c
}

// load returns k's children, if they were added.
func (c *children[K, V]) load(k K) (V, bool) {
	v, ok := (*c.m.Load())[k]
	return v, ok
}

// add returns k's children, resolving them with resolve unless another call added them
// first. It is load's slow path, taken once per key.
func (c *children[K, V]) add(k K, resolve func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.m.Load()
	if v, ok := old[k]; ok {
		return v
	}
	v := resolve()
	m := make(map[K]V, len(old)+1)
	maps.Copy(m, old)
	m[k] = v
	c.m.Store(&m)
	return v
}
