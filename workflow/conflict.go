package workflow

import (
	"context"
	"errors"
	"fmt"
)

// untilApplied runs write (which reads an entity, decides, and writes it on the version
// it read) again while it reports ErrConflict, until it reports anything else or ctx
// ends.
//
// There is no retry budget. A conflict means that another writer's change to the entity
// was applied since the read, so every retry follows someone's progress and the loop
// ends when the contention does, however many writers meet on one entity: the siblings
// of a process decided at once on several engines all change its graph. A budget would
// be used up by a large enough burst, and leave a decision out of the graph until the
// idle scan came by, minutes later.
func untilApplied[T any](ctx context.Context, write func() (T, error)) (T, error) {
	for {
		v, err := write()
		if !errors.Is(err, ErrConflict) {
			return v, err
		}
		if cerr := ctx.Err(); cerr != nil {
			var zero T
			return zero, fmt.Errorf("workflow: %w, retrying after a conflict", cerr)
		}
	}
}
