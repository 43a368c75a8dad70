package group_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit"
	cpgstore "github.com/feedkit/feedkit/carousel/pgstore"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/recovery"
	rpgstore "github.com/feedkit/feedkit/recovery/pgstore"
)

// The names of a group's exchanges and queues in the operator's RabbitMQ, and the shard
// a match's messages go to.
func ExampleTopology() {
	top := group.Topology{Prefix: "odds", Shards: 4}
	fmt.Println("shards:", top.ShardQueue(0), "to", top.ShardQueue(top.Shards-1))
	fmt.Println("global events:", top.ControlExchange())
	fmt.Println("sr:match:1234 is in", top.ShardQueue(top.ShardOf("sr:match:1234")))
	// Output:
	// shards: odds.shard.0 to odds.shard.3
	// global events: odds.control
	// sr:match:1234 is in odds.shard.2
}

// An ingress of two: the one holding the lease reads the feed, the other takes over
// when it stops or dies, from the recovery point saved in PostgreSQL.
func ExampleNewIngress() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := rpgstore.NewStore(ctx, pool, rpgstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	lease, err := cpgstore.NewLease(pool, cpgstore.LeaseOptions{Name: "odds-ingress", Failover: true})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = lease.Close(context.Background()) }()
	in, err := group.NewIngress(group.IngressConfig{
		SDK: feedkit.Config{ // the feed, as for one process
			Environment: &feedkit.Integration,
			AccessToken: os.Getenv("FEED_ACCESS_TOKEN"),
			Node:        feed.Node(1),
			Recovery:    recovery.Config{Store: store},
		},
		URL:      "amqp://odds:secret@rabbitmq.internal:5672/odds", // the operator's own broker
		Topology: group.Topology{Prefix: "odds", Shards: 4},
		Toggle:   lease,
		OnError:  func(err error) { log.Print(err) },
	})
	if err != nil {
		log.Fatal(err) // a bad config names its field
	}
	if err := in.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// exampleSettlements is a listener as a single process gives SDK.AddSession.
type exampleSettlements struct{ feed.BaseOddsFeedListener }

func (exampleSettlements) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	log.Printf("%s: %d markets settled", m.Event, len(m.Markets))
	return nil
}

// A worker of shards 0 and 1 of 4, with the listener a single process would have. A
// second worker of the same shards is its standby.
func ExampleNewWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := group.NewWorker(group.WorkerConfig{
		URL:        "amqp://odds:secret@rabbitmq.internal:5672/odds",
		Topology:   group.Topology{Prefix: "odds", Shards: 4},
		Shards:     []int{0, 1},
		Listener:   exampleSettlements{},
		Concurrent: concurrent.Config{Threads: 8},
		OnError:    func(err error) { log.Print(err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil { // until SIGTERM, then the calls under way finish
		log.Print(err)
	}
}
