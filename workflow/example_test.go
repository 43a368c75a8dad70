package workflow_test

import (
	"context"
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
