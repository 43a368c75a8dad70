package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"time"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/recording"
)

// record records what an SDK receives: from a feed (RabbitMQ and its API, as a custom
// environment) until interrupted or for a while, or from an in-process simulator.
func record(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("record", stderr)
	out := fs.String("o", "", "the recording's file (required; not overwritten)")
	amqpURL := fs.String("amqp", "", "the feed's broker, such as amqps://host:5671/ (with -api and -token)")
	apiURL := fs.String("api", "", "the feed's API, such as https://host")
	token := fs.String("token", "", "the access token (or FEED_ACCESS_TOKEN)")
	node := fs.Int("node", 1, "this SDK's node id")
	forD := fs.Duration("for", 0, "stop after this long; 0 records until interrupted")
	simN := fs.Int("sim", 0, "record N event messages of an in-process simulator instead of a feed")
	if err := fs.Parse(args); err != nil {
		return &usageError{err.Error()}
	}
	if *token == "" {
		*token = os.Getenv("FEED_ACCESS_TOKEN")
	}
	switch {
	case *out == "" || fs.NArg() != 0:
		return &usageError{"record: -o, the recording's file, is required, and no other argument is taken"}
	case *simN < 0 || *forD < 0:
		return &usageError{"record: -sim and -for must not be negative"}
	case *simN == 0 && (*amqpURL == "" || *apiURL == "" || *token == ""):
		return &usageError{"record: -amqp, -api and -token (or FEED_ACCESS_TOKEN) name the feed; or -sim N"}
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w, err := recording.NewWriter(f, recording.WriterOptions{})
	if err != nil {
		f.Close()
		return err
	}
	cfg := feedkit.Config{Node: feed.Node(*node), OnDelivery: w.RecordDelivery, API: feedapi.Config{OnResponse: w.RecordResponse},
		OnError: func(err error) { fmt.Fprintln(stderr, "feedkit:", err) }}
	if *simN > 0 {
		err = recordSimulator(ctx, cfg, *simN)
	} else {
		env := feedkit.CustomEnvironment(*amqpURL, *apiURL)
		cfg.Environment, cfg.AccessToken = &env, *token
		err = recordFeed(ctx, cfg, *forD, w, stderr)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	st := w.Stats()
	fmt.Fprintf(stdout, "recorded %d frames, %d bytes, into %s\n", st.Frames, st.WrittenBytes, *out)
	return err
}

// recordFeed records a feed until ctx ends or for d, telling the progress every 10 s.
func recordFeed(ctx context.Context, cfg feedkit.Config, d time.Duration, w *recording.Writer, stderr io.Writer) error {
	sdk, err := feedkit.New(cfg)
	if err != nil {
		return err
	}
	if err := sdk.AddSession(feed.AllMessages, feed.BaseOddsFeedListener{}); err != nil {
		return err
	}
	if err := sdk.Open(ctx); err != nil {
		return err
	}
	var stop <-chan time.Time
	if d > 0 {
		stop = time.After(d)
	}
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-stop:
			break wait
		case <-tick.C:
			fmt.Fprintf(stderr, "... %d frames recorded\n", w.Stats().Frames)
		}
	}
	return sdk.Close(context.WithoutCancel(ctx))
}

// recordSimulator records n event messages of a simulator on the embedded broker, and
// its API's answers, through the SDK.
func recordSimulator(ctx context.Context, cfg feedkit.Config, n int) error {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()
	s, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Matches: 20, Rate: feedtest.Unlimited})
	if err != nil {
		return err
	}
	api := httptest.NewServer(s.APIHandler(feedtest.Account{}))
	defer api.Close()
	env := feedkit.CustomEnvironment("", api.URL)
	cfg.Environment, cfg.AccessToken, cfg.Transport = &env, feedtest.DefaultAccessToken, broker
	sdk, err := feedkit.New(cfg)
	if err != nil {
		return err
	}
	if err := sdk.AddSession(feed.AllMessages, feed.BaseOddsFeedListener{}); err != nil {
		return err
	}
	if err := sdk.Open(ctx); err != nil {
		return err
	}
	if err := s.Publish(ctx, n); err != nil {
		return err
	}
	if err := broker.Flush(ctx); err != nil {
		return err
	}
	return sdk.Close(context.WithoutCancel(ctx))
}
