package main

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/feedkit/feedkit/carousel"
)

// countingPublisher counts the successful republications of each cycle, for the progress
// lines, and tells until (when set) after each one: options.until ends a run by what
// happened in it.
type countingPublisher struct {
	next  carousel.Publisher
	until func(republished map[string]int) bool

	mu      sync.Mutex
	byCycle map[string]int
	failed  int // publications that failed, other than those a shutdown broke off
}

func (p *countingPublisher) Publish(ctx context.Context, pub carousel.Publication) error {
	if err := p.next.Publish(ctx, pub); err != nil {
		if !errors.Is(err, context.Canceled) {
			p.mu.Lock()
			p.failed++
			p.mu.Unlock()
		}
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byCycle[pub.Cycle]++
	if p.until != nil {
		p.until(maps.Clone(p.byCycle))
	}
	return nil
}

// counts returns how many items each cycle has republished so far.
func (p *countingPublisher) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.byCycle)
}

// failures returns how many publications have failed so far.
func (p *countingPublisher) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}
