package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/workflow"
)

// An order process: the start task, done by a "check" actor, schedules a "pay" task; the
// process is finished when both are decided. Run the recovery service (Engine.Run) beside
// the actors in a real program.
func ExampleEngine() {
	ctx := context.Background()
	engine, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _, _ := engine.Start(ctx, workflow.StartRequest{Type: "order", CustomID: "order-1",
		Start: workflow.TaskSpec{ActorType: "check", Args: []byte(`{"amount":42}`)}})

	// The "check" actor.
	task, _, _ := engine.Poll(ctx, "check")
	fmt.Printf("check got %s\n", task.Spec.Args)
	_ = engine.Release(ctx, workflow.Decision{TaskID: task.ID, Pass: task.Pass, Result: []byte("ok"),
		Next: []workflow.TaskSpec{{ActorType: "pay"}}})

	// The "pay" actor.
	task, _, _ = engine.Poll(ctx, "pay")
	_ = engine.Release(ctx, workflow.Decision{TaskID: task.ID, Pass: task.Pass})

	found, _, _ := engine.Search(ctx, workflow.Query{CustomID: "order-1"})
	fmt.Println(found[0].ID == p.ID, found[0].State)
	// Output:
	// check got {"amount":42}
	// true finished
}

// A start keyed by the order's id: the starter that restarts, or gets the order twice,
// starts it again and gets the same process, created once; the same key with another
// order's arguments is refused.
func ExampleEngine_Start() {
	ctx := context.Background()
	engine, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := workflow.StartRequest{Type: "order", CustomID: "customer-7", IdempotencyKey: "order-1",
		Start: workflow.TaskSpec{ActorType: "check", Args: []byte(`{"amount":42}`)}}
	first, created, err := engine.Start(ctx, req)
	fmt.Println(created, err)
	again, created, err := engine.Start(ctx, req)
	fmt.Println(created, err, again.ID == first.ID)

	req.Start.Args = []byte(`{"amount":43}`)
	_, _, err = engine.Start(ctx, req)
	fmt.Println(errors.Is(err, workflow.ErrKeyReused))
	// Output:
	// true <nil>
	// false <nil> true
	// true
}

// A work timeout tested from outside the package, with the recovery service on its own
// goroutine as in production: the fake clock moves to the timeout, and Flush returns
// once Run has made its pass there, without a sleep or a poll.
func ExampleEngine_Flush() {
	fake := clocktest.NewFake(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	engine, err := workflow.New(workflow.NewMemoryStore(), workflow.Config{Clock: fake,
		ScanInterval: time.Minute, Actors: map[string]workflow.ActorPrefs{"pay": {WorkTimeout: 5 * time.Minute}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = engine.Run(ctx) }()
	_ = engine.Flush(ctx) // Run has begun: its ticks are every minute from now

	_, _, _ = engine.Start(ctx, workflow.StartRequest{Type: "order", Start: workflow.TaskSpec{ActorType: "pay"}})
	task, _, _ := engine.Poll(ctx, "pay") // the actor never answers

	fake.Advance(5*time.Minute - time.Second)
	_ = engine.Flush(ctx)
	_, queued, _ := engine.Poll(ctx, "pay")
	fmt.Println("at 4m59s, queued again:", queued)

	fake.Advance(time.Second)
	_ = engine.Flush(ctx)
	again, queued, _ := engine.Poll(ctx, "pay")
	fmt.Println("at 5m, queued again:", queued, again.ID == task.ID, "work timeouts:", engine.Counters().WorkTimeouts)
	// Output:
	// at 4m59s, queued again: false
	// at 5m, queued again: true true work timeouts: 1
}
