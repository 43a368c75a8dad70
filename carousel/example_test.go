package carousel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/clock/clocktest"
)

// A whole collection republished one item every 10 ms, until three were.
func ExampleScheduler() {
	src := carousel.NewMemorySource()
	_ = src.Put("articles", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})

	done := make(chan struct{})
	published := 0
	dir, _ := os.MkdirTemp("", "carousel-example")
	defer os.RemoveAll(dir)
	pub := carousel.PublisherFunc(func(ctx context.Context, p carousel.Publication) error {
		fmt.Printf("%s: %s/%s as %s\n", p.Cycle, p.Collection, p.Item.ID, p.Origin)
		if published++; published == 3 {
			close(done)
		}
		return nil
	})
	s, err := carousel.NewScheduler(src, pub, carousel.Config{MetadataFile: filepath.Join(dir, "metadata.json")})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	err = s.Add(ctx, carousel.CycleConfig{Name: "articles-whole", Type: carousel.ThrottledWholeCollection,
		Origin: "cms", Collection: "articles", CoolDown: time.Minute, Throttle: 10 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-done
	_ = s.Shutdown(ctx)
	st, _ := s.Cycle("articles-whole")
	fmt.Printf("%d items, %v\n", st.Metadata.Total, st.Metadata.States)
	// Output:
	// articles-whole: articles/a1 as cms
	// articles-whole: articles/a2 as cms
	// articles-whole: articles/a3 as cms
	// 3 items, [stopped]
}

// Every bad field of a config file is named, before anything starts.
func ExampleParseConfig() {
	_, err := carousel.ParseConfig(strings.NewReader(`
cycles:
  - name: wordpress-hour
    type: FixedWindow
    origin: wordpress
    collection: wordpress
    coolDown: 5m
    timeWindow: an hour
`))
	fmt.Println(err)
	// Output:
	// cycles[0].timeWindow "an hour" is not a duration (e.g. 90s, 15m, 1h)
	// cycles[0].minimumThrottle is required
}

// A FixedWindow cycle tested from outside on a fake clock: its plan says two items in a
// one-hour window go out one every 30 minutes, and the scheduler, driven by Advance and
// Flush, publishes them so. The next window (the hour since the first began) holds the
// item modified meanwhile. Nothing sleeps: Flush returns once the cycle has published
// what was due by the clock's time.
func ExampleScheduler_Flush() {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	clk := clocktest.NewFake(start)
	src := carousel.NewMemorySource()
	_ = src.Put("articles",
		carousel.Item{ID: "a1", Modified: start.Add(-40 * time.Minute)},
		carousel.Item{ID: "a2", Modified: start.Add(-10 * time.Minute)},
		carousel.Item{ID: "a3", Modified: start.Add(20 * time.Minute)})

	cycle := carousel.CycleConfig{Name: "articles-hour", Type: carousel.FixedWindow, Origin: "cms",
		Collection: "articles", CoolDown: 5 * time.Minute, TimeWindow: time.Hour, MinimumThrottle: time.Minute}
	plan := cycle.Plan(2)
	fmt.Printf("plan: %d items, one every %v, %v in all, next window %v\n",
		plan.Items, plan.Throttle, plan.Duration, plan.NextWindow)
	for i := range plan.Items {
		fmt.Printf("  item %d at +%v\n", i+1, plan.PublishedAt(i))
	}

	pub := carousel.PublisherFunc(func(ctx context.Context, p carousel.Publication) error {
		fmt.Printf("+%v: %s (iteration %d, position %d)\n", clk.Since(start), p.Item.ID, p.Iteration, p.Position)
		return nil
	})
	s, err := carousel.NewScheduler(src, pub, carousel.Config{Store: carousel.NewMemoryStore(), Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := s.Add(ctx, cycle); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = s.Shutdown(ctx) }()
	for step := 0; ; step++ {
		if err := s.Flush(ctx); err != nil {
			fmt.Println(err)
			return
		}
		if step == 2 {
			break
		}
		clk.Advance(30 * time.Minute)
	}
	// Output:
	// plan: 2 items, one every 30m0s, 1h0m0s in all, next window 1h0m0s
	//   item 1 at +0s
	//   item 2 at +30m0s
	// +0s: a1 (iteration 1, position 1)
	// +30m0s: a2 (iteration 1, position 2)
	// +1h0m0s: a3 (iteration 2, position 1)
}
