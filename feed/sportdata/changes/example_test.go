package changes_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// A manager on the simulator's Sports API, its cursors in a file: its first poll, made
// as Run begins, delivers the changes listed; a manager started later on the file
// delivers the changes made since, and none of the others again. (With an SDK, give it the SDK's feedapi.Client.)
func ExampleManager() {
	clk := clocktest.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}),
		feedtest.SimulatorConfig{Matches: 1, Rate: feedtest.Unlimited, Clock: clk})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	defer api.Close()
	client, err := feedapi.NewClient(feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken})
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "changes")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "changes.json")

	listener := changes.ListenerFunc(func(ctx context.Context, c changes.Change) error {
		// A sportsbook would fetch the event's fixture or summary again here.
		fmt.Println(c)
		return nil
	})
	for range 2 { // two processes, one after the other
		clk.Advance(10 * time.Minute)
		if err := sim.Publish(ctx, 150); err != nil { // matches begin and end
			panic(err)
		}
		m, err := changes.New(client, listener, changes.Config{Store: changes.NewFileStore(path), Clock: clk})
		if err != nil {
			panic(err)
		}
		go m.Run(ctx)
		if err := m.Flush(ctx); err != nil { // the first poll is done
			panic(err)
		}
		if err := m.Close(ctx); err != nil {
			panic(err)
		}
		fmt.Println("delivered:", m.Stats().Delivered)
	}
	// Output:
	// fixture change of sr:match:1000001 at 2026-03-01T12:10:00Z
	// fixture change of sr:match:1000002 at 2026-03-01T12:10:00Z
	// result change of sr:match:1000001 at 2026-03-01T12:10:00Z
	// delivered: 3
	// fixture change of sr:match:1000003 at 2026-03-01T12:20:00Z
	// result change of sr:match:1000002 at 2026-03-01T12:20:00Z
	// delivered: 2
}
