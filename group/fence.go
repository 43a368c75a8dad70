package group

import (
	"context"
	"fmt"

	"github.com/feedkit/feedkit/recovery"
)

// fencedStore is an activation's view of a recovery.FencedStore: every save carries the
// activation's epoch, and Load claims each record for it, so that once this ingress has
// loaded its recovery point, an earlier ingress that has not yet seen that it lost the
// lease cannot save over it. Without the fence, that ingress's last save (at its stop)
// could put back a point past messages that the workers dropped as fenced, and the next
// ingress would resume from there.
type fencedStore struct {
	recovery.FencedStore
	epoch int64
}

// withFence returns store fenced by epoch when it can be, else store as it is.
func withFence(store recovery.Store, epoch int64) recovery.Store {
	if fs, ok := store.(recovery.FencedStore); ok {
		return fencedStore{fs, epoch}
	}
	return store
}

// Load loads the records and saves each again as this epoch's.
func (s fencedStore) Load(ctx context.Context) ([]recovery.Record, error) {
	recs, err := s.FencedStore.Load(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if err := s.SaveGeneration(ctx, r, s.epoch); err != nil {
			return nil, fmt.Errorf("group: claiming producer %d's recovery point for epoch %d: %w", r.Producer, s.epoch, err)
		}
	}
	return recs, nil
}

// Save saves r as this epoch's: recovery.ErrFenced once a later epoch has claimed it.
func (s fencedStore) Save(ctx context.Context, r recovery.Record) error {
	return s.SaveGeneration(ctx, r, s.epoch)
}
