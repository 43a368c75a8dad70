package carousel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/feedkit/feedkit/carousel"
)

// A whole collection republished one item every 10 ms, until three were.
func ExampleScheduler() {
	src := carousel.NewMemorySource()
	_ = src.Put("articles", carousel.Item{ID: "a1"}, carousel.Item{ID: "a2"}, carousel.Item{ID: "a3"})

	done := make(chan struct{})
	published := 0
	dir, _ := os.MkdirTemp("", "carousel-example")
	defer os.RemoveAll(dir)
	s, err := carousel.NewScheduler(carousel.Config{
		Source:       src,
		MetadataFile: filepath.Join(dir, "metadata.json"),
		Publisher: carousel.PublisherFunc(func(ctx context.Context, p carousel.Publication) error {
			fmt.Printf("%s: %s/%s as %s\n", p.Cycle, p.Collection, p.Item.ID, p.Origin)
			if published++; published == 3 {
				close(done)
			}
			return nil
		}),
	})
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
