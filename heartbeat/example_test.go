package heartbeat_test

import (
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/heartbeat"
)

// Two sensors with a 30-second timeout; one falls silent, is found lost, and comes back.
// A fake clock stands in for time; a real program leaves Config.Clock nil and runs
// m.Run(ctx) (or calls m.Advance(time.Now()) from a loop of its own).
func Example() {
	fake := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	m, err := heartbeat.New(heartbeat.Config[string]{
		Timeout: 30 * time.Second,
		Clock:   fake,
		OnLost: func(id string, lastSeen time.Time) {
			fmt.Printf("%s lost, last seen %s\n", id, lastSeen.Format(time.TimeOnly))
		},
		OnRestored: func(id string, silentFor time.Duration) {
			fmt.Printf("%s restored after %v of silence\n", id, silentFor)
		},
	})
	if err != nil {
		panic(err)
	}

	m.Beat("door-1")
	m.Beat("door-2")
	for range 4 { // door-1 keeps beating every 10s, door-2 is silent
		fake.Advance(10 * time.Second)
		m.Beat("door-1")
		if n := m.Advance(fake.Now()); n > 0 {
			fmt.Println("found lost:", n)
		}
	}
	fake.Advance(5 * time.Second)
	m.Beat("door-2")

	st, _ := m.Get("door-2")
	fmt.Printf("door-2 lost: %v, keys: %d\n", st.Lost, m.Len())
	// Output:
	// door-2 lost, last seen 12:00:00
	// found lost: 1
	// door-2 restored after 45s of silence
	// door-2 lost: false, keys: 2
}

// A test of a rule from outside the package, with Run on its own goroutine as in
// production: the fake clock moves exactly to the limit, and Flush returns once the
// monitor has acted on it (the keys due found lost, their OnLost returned), without a
// sleep or a poll. A silence of exactly the timeout is a loss.
func ExampleMonitor_Flush() {
	fake := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	m, err := heartbeat.New(heartbeat.Config[string]{
		Timeout: 30 * time.Second,
		Clock:   fake,
		OnLost: func(id string, lastSeen time.Time) {
			fmt.Printf("%s lost, last seen %s\n", id, lastSeen.Format(time.TimeOnly))
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Run(ctx) }()

	m.Beat("door-1")
	fake.Advance(30*time.Second - time.Nanosecond)
	if err := m.Flush(ctx); err != nil {
		panic(err)
	}
	fmt.Println("at 29.999999999s, lost:", m.Stats().Lost)
	fake.Advance(time.Nanosecond)
	if err := m.Flush(ctx); err != nil {
		panic(err)
	}
	fmt.Println("at 30s, lost:", m.Stats().Lost)
	// Output:
	// at 29.999999999s, lost: 0
	// door-1 lost, last seen 12:00:00
	// at 30s, lost: 1
}
