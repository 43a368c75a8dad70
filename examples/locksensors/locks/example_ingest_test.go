package locks_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// An Ingester stores readings and decides who is told what: the first reading of a
// sensor and every change notify its clients, a repeat notifies nobody, and a message
// that is not a reading goes to the dead letters with the reason.
func ExampleIngester() {
	ctx := context.Background()
	store := locks.NewMemoryStore(0)
	_ = store.CreateSensor(ctx, locks.Sensor{ID: "xa7v9Dfadr7H", Address: "Moscow, Russia, Svobody st. 23 fl 1 room 16"})
	desk, _ := store.CreateClient(ctx, locks.Client{Name: "Security desk", URL: "https://desk.example/notify"})
	_ = store.Link(ctx, "xa7v9Dfadr7H", desk.ID)

	in, _ := locks.NewIngester(store, locks.IngesterConfig{})
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, body := range []string{
		`{"sensor_id": "xa7v9Dfadr7H", "data": 1, "ts": "2026-11-21T12:00:00Z"}`,
		`{"sensor_id": "xa7v9Dfadr7H", "data": 1, "ts": "2026-11-21T12:01:00Z"}`,
		`{"sensor_id": "xa7v9Dfadr7H", "data": 0, "ts": "2026-11-21T12:02:00Z"}`,
		`{"sensor_id": "xa7v9Dfadr7H", "data": 2, "ts": "2026-11-21T12:03:00Z"}`,
	} {
		_ = in.HandleBatch(ctx, []locks.Message{{Body: []byte(body), Received: now}})
	}

	notes, _ := store.Notifications(ctx, "xa7v9Dfadr7H", locks.Range{Limit: 10})
	for _, n := range notes {
		fmt.Println(strings.TrimSpace(fmt.Sprintln(n.Event, n.State, n.Status, n.Reason)))
	}
	dead, _ := store.DeadLetters(ctx, 0, 10)
	fmt.Println(dead[0].Reason)
	// Output:
	// changed 1 cancelled superseded
	// changed 0 pending
	// data: 2 is not 0 or 1
}
