package feedkit

import (
	"context"
	"log/slog"

	"github.com/feedkit/feedkit/recovery"
)

// warnUnpersisted logs a warning when recoveries are on and the producer records are kept
// in memory only (Config.Recovery.Store nil or a *recovery.MemoryStore). A restarted
// process then knows nothing of its producers and recovers each from
// Config.Recovery.AssumedDowntime ago only: the bet settlements and cancels sent before
// that are never seen, with nothing else to say so. It is a warning, not an error: a
// test or a development run may well accept it.
func (s *SDK) warnUnpersisted(ctx context.Context) {
	rc := s.cfg.Recovery
	if !recordsInMemory(rc.Store) {
		return
	}
	// As New read it: a value New refused never gets here.
	if disabled, err := recoveriesDisabled(rc.Disabled, osGetenv); err != nil || disabled {
		return
	}
	downtime := rc.AssumedDowntime
	if downtime == 0 {
		downtime = recovery.DefaultAssumedDowntime
	}
	s.logger.LogAttrs(ctx, slog.LevelWarn,
		"feedkit: producer records are kept in memory only (Config.Recovery.Store): after a restart each producer is recovered from Config.Recovery.AssumedDowntime ago only, and what the feed sent before is never replayed; set a recovery.FileStore or a pgstore.Store to recover from the last record",
		slog.Duration("assumed_downtime", downtime))
}

// recordsInMemory reports whether store keeps the producer records in the process only.
func recordsInMemory(store recovery.Store) bool {
	switch store.(type) {
	case nil, *recovery.MemoryStore:
		return true
	}
	return false
}
