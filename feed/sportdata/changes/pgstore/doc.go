// Package pgstore keeps the changes manager's cursors in PostgreSQL, so that a restarted
// process, or another that takes over, delivers each fixture and result change once. It
// runs on a *pgxpool.Pool (pgx v5) that the caller owns and closes.
//
// # Schema
//
// NewStore creates its table if it does not exist, in the schema the pool's search_path
// selects, with the name prefixed by Options.TablePrefix (default "feedkit_changes_"):
//
//	CREATE TABLE IF NOT EXISTS feedkit_changes_cursors (
//	    kind   text        PRIMARY KEY,  -- "fixture" or "result"
//	    at     timestamptz NOT NULL,     -- the update_time of the latest change delivered
//	    events text[]      NOT NULL      -- the events whose change at that time was delivered
//	);
//
// The statement runs in a transaction under a transaction-level advisory lock, so that
// processes starting at the same moment do not trip over each other: PostgreSQL's
// CREATE TABLE IF NOT EXISTS is not safe against a concurrent creation of the same
// table.
//
// # Times
//
// PostgreSQL keeps timestamps to the microsecond, as the changes package reads them;
// a cursor's time comes back in UTC.
package pgstore
