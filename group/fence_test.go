package group

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// A hand-over: ingress 2 loads the recovery point and so claims it; ingress 1, which
// has not seen it lost the lease, then saves its own point at its stop, and is refused;
// ingress 2's saves go on, and a store that cannot be fenced is used as it is.
func TestFencedStoreKeepsADeposedIngressFromSavingOver(t *testing.T) {
	ctx := context.Background()
	store := recovery.NewMemoryStore()
	at := func(min int) time.Time { return time.Date(2026, 11, 29, 12, min, 0, 0, time.UTC) }
	first := withFence(store, 1)
	require.NoError(t, first.Save(ctx, recovery.Record{Producer: 1, LastSubscribedAt: at(1)}))
	require.NoError(t, first.Save(ctx, recovery.Record{Producer: 3, LastSubscribedAt: at(1)}))

	second := withFence(store, 2)
	loaded, err := second.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, loaded, 2)

	err = first.Save(ctx, recovery.Record{Producer: 1, LastSubscribedAt: at(5)})
	assert.ErrorIs(t, err, recovery.ErrFenced, "the deposed ingress's save at its stop")
	require.NoError(t, second.Save(ctx, recovery.Record{Producer: 1, LastSubscribedAt: at(3)}))
	recs, err := store.Load(ctx)
	require.NoError(t, err)
	for _, r := range recs {
		if r.Producer == 1 {
			assert.Equal(t, at(3), r.LastSubscribedAt, "the second ingress's point stands")
		}
	}

	_, err = withFence(store, 1).Load(ctx)
	assert.ErrorIs(t, err, recovery.ErrFenced, "an ingress of an earlier epoch cannot resume")

	var plain plainStore
	assert.Equal(t, recovery.Store(plain), withFence(plain, 7))
}

// plainStore is a Store without generations.
type plainStore struct{}

func (plainStore) Load(context.Context) ([]recovery.Record, error) { return nil, nil }
func (plainStore) Save(context.Context, recovery.Record) error     { return nil }
