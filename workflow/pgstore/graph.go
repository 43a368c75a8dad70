package pgstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/workflow"
)

// graphArgs returns g's columns as arguments, in the order of graphColumns.
func graphArgs(g workflow.Graph) []any {
	return []any{g.ProcessID, g.Run, g.NotFinished, g.Finished, pgschema.In(g.ChangedAt), pgschema.InNull(g.RecoveryTime)}
}

// storedGraph returns g as a write stores it, with version v.
func storedGraph(g workflow.Graph, v int64) workflow.Graph {
	g.NotFinished, g.Finished = slices.Clone(g.NotFinished), slices.Clone(g.Finished)
	g.ChangedAt, g.RecoveryTime = pgschema.In(g.ChangedAt), pgschema.In(g.RecoveryTime)
	g.Version = v
	return g
}

// scanGraph scans the columns of selectSQL(graphs).
func scanGraph(row scanner) (workflow.Graph, error) {
	var (
		g         workflow.Graph
		changedAt time.Time
		recovery  *time.Time
	)
	if err := row.Scan(&g.ProcessID, &g.Run, &g.NotFinished, &g.Finished, &changedAt, &recovery, &g.Version); err != nil {
		return workflow.Graph{}, err
	}
	g.ChangedAt, g.RecoveryTime = pgschema.Out(changedAt), pgschema.OutNull(recovery)
	return g, nil
}

// CreateGraph implements workflow.Store: it inserts g with version 1
// (workflow.ErrExists if the process has a graph).
func (s *Store) CreateGraph(ctx context.Context, g workflow.Graph) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: create graph %s: %w", g.ProcessID, err)
	}
	return s.insert(ctx, "graph", g.ProcessID, s.sql.insertGraph, graphArgs(g))
}

// Graph implements workflow.Store (workflow.ErrNotFound).
func (s *Store) Graph(ctx context.Context, processID string) (workflow.Graph, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Graph{}, fmt.Errorf("pgstore: graph %s: %w", processID, err)
	}
	g, err := scanGraph(s.pool.QueryRow(ctx, s.sql.selectGraph, processID))
	if err != nil {
		return workflow.Graph{}, fmt.Errorf("pgstore: graph %s: %w", processID, notFound(err))
	}
	return g, nil
}

// UpdateGraph implements workflow.Store: it writes g if the stored version is g.Version
// (workflow.ErrConflict otherwise, workflow.ErrNotFound if there is none) and returns it
// as stored, with the next version.
func (s *Store) UpdateGraph(ctx context.Context, g workflow.Graph) (workflow.Graph, error) {
	if err := ctx.Err(); err != nil {
		return workflow.Graph{}, fmt.Errorf("pgstore: update graph %s: %w", g.ProcessID, err)
	}
	if err := s.update(ctx, "graph", g.ProcessID, g.Version, s.sql.updateGraph, s.sql.existsGraph, graphArgs(g)); err != nil {
		return workflow.Graph{}, err
	}
	return storedGraph(g, g.Version+1), nil
}

// DueGraphs implements workflow.Store, on the partial index of recovery_time.
func (s *Store) DueGraphs(ctx context.Context, now time.Time, limit int) ([]workflow.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: due graphs: %w", err)
	}
	limit, err := workflow.ResolveLimit("limit", limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: due graphs: %w", err)
	}
	rows, _ := s.pool.Query(ctx, s.sql.dueGraphs, pgschema.In(now), limit)
	gs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (workflow.Graph, error) { return scanGraph(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: due graphs: %w", err)
	}
	return gs, nil
}
