package workflow_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/feedkit/feedkit/workflow"
)

// An order process: the start task, done by a "check" actor, schedules a "pay" task; the
// process is finished when both are decided. Run the recovery service (Engine.Run) beside
// the actors in a real program.
func ExampleEngine() {
	ctx := context.Background()
	engine, err := workflow.New(workflow.Config{Store: workflow.NewMemoryStore()})
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
	engine, err := workflow.New(workflow.Config{Store: workflow.NewMemoryStore()})
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
