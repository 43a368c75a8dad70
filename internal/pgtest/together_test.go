package pgtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failures is a testing.TB that records what Together reports, rather than failing the
// test that checks it.
type failures struct {
	testing.TB
	mu      sync.Mutex
	msgs    []string
	stopped bool
}

func (f *failures) Helper() {}

func (f *failures) FailNow() { f.stopped = true }

func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// Every call runs once, on its pool, and all of them at once: each waits until all have
// begun, which calls run one after another would never see.
func TestTogether(t *testing.T) {
	pools := []*pgxpool.Pool{new(pgxpool.Pool), new(pgxpool.Pool), new(pgxpool.Pool)} // identities only
	const n = 8
	var (
		mu    sync.Mutex
		on    = map[int]*pgxpool.Pool{}
		begun sync.WaitGroup
	)
	begun.Add(n)
	all := make(chan struct{})
	go func() { begun.Wait(); close(all) }()
	f := &failures{TB: t}
	Together(f, pools, n, func(i int, p *pgxpool.Pool) error {
		mu.Lock()
		_, again := on[i]
		on[i] = p
		mu.Unlock()
		if again {
			return fmt.Errorf("call %d twice", i)
		}
		begun.Done()
		select {
		case <-all:
			return nil
		case <-time.After(30 * time.Second): // only a hang gets here
			return errors.New("the other calls never began")
		}
	})
	assert.Empty(t, f.msgs)
	assert.False(t, f.stopped)
	require.Len(t, on, n)
	for i, p := range on {
		assert.Same(t, pools[i%len(pools)], p, "call %d", i)
	}
}

// Each failed call is reported, naming it and its pool, the others not, and then the
// test is stopped.
func TestTogetherReportsEveryFailure(t *testing.T) {
	pools := []*pgxpool.Pool{new(pgxpool.Pool), new(pgxpool.Pool)}
	f := &failures{TB: t}
	Together(f, pools, 5, func(i int, _ *pgxpool.Pool) error {
		if i == 1 || i == 4 {
			return fmt.Errorf("refused %d", i)
		}
		return nil
	})
	assert.ElementsMatch(t, []string{"pgtest: call 1 of 5, on pool 1: refused 1", "pgtest: call 4 of 5, on pool 0: refused 4"}, f.msgs)
	assert.True(t, f.stopped)
}
