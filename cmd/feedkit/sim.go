package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// sim runs the simulator as a process of its own: its feed published into RabbitMQ, its
// API (the account, recoveries, the Sports API) served over HTTP, so that a service can
// be tested against it and restarted while the feed goes on.
func sim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", stderr)
	amqpURL := fs.String("amqp", "", "the RabbitMQ to publish to (required), such as amqp://guest:guest@127.0.0.1:5672/")
	exchange := fs.String("exchange", rabbitmq.DefaultExchange, "the topic exchange to publish to, declared if missing")
	addr := fs.String("http", "127.0.0.1:8080", "where to serve the simulator's API")
	rate := fs.Float64("rate", feedtest.DefaultRate, "event messages a second")
	matches := fs.Int("matches", 20, "matches running at a time")
	messages := fs.Int("messages", 0, "publish this many event messages and stop; 0 runs until interrupted")
	if err := fs.Parse(args); err != nil {
		return &usageError{err.Error()}
	}
	if *amqpURL == "" || fs.NArg() != 0 {
		return &usageError{"sim: -amqp is required, and no file is taken"}
	}
	pub, err := rabbitmq.NewPublisher(ctx, rabbitmq.Config{URL: *amqpURL, Exchange: *exchange, DeclareExchange: true, ConnectionName: "feedkit-sim"})
	if err != nil {
		return err
	}
	defer pub.Close(context.WithoutCancel(ctx))
	s, err := feedtest.NewSimulator(pub, feedtest.SimulatorConfig{Rate: *rate, Matches: *matches})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.APIHandler(feedtest.Account{}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "simulator: publishing to exchange %s; its API at http://%s (token %s)\n", *exchange, ln.Addr(), feedtest.DefaultAccessToken)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		defer srv.Shutdown(context.WithoutCancel(gctx))
		if *messages > 0 {
			if err := s.Publish(gctx, *messages); err != nil {
				return err
			}
			return pub.Flush(gctx)
		}
		return s.Run(gctx)
	})
	err = g.Wait()
	st := s.Stats()
	fmt.Fprintf(stdout, "simulator: published %d event messages and %d alives\n", st.Events, st.Alives)
	if ctx.Err() != nil {
		return nil // interrupted: the end asked for
	}
	return err
}
