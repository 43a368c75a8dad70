// Package pgstore keeps the recovery manager's shared state in PostgreSQL: a Ledger of
// recovery requests, so that every process (every node id) of an account obeys the
// account's recovery rate limits together, and a Store of producer records, so that a
// restarted process recovers each producer from the right time. Both run on a
// *pgxpool.Pool (pgx v5) that the caller owns and closes.
//
// # Schema
//
// NewLedger and NewStore create their table if it does not exist, in the schema the
// pool's search_path selects, with the table names prefixed by Options.TablePrefix
// (default "feedkit_recovery_"):
//
//	CREATE TABLE IF NOT EXISTS feedkit_recovery_requests (
//	    id       bigserial   PRIMARY KEY,
//	    account  text        NOT NULL,
//	    class    integer     NOT NULL,  -- the tier of length in the request's Limits; -1 for none
//	    at       timestamptz NOT NULL,  -- when the request was sent
//	    node     bigint,                -- the requesting node id; NULL for none
//	    producer bigint      NOT NULL,
//	    length   interval    NOT NULL   -- how far back the recovery goes
//	);
//	CREATE INDEX IF NOT EXISTS feedkit_recovery_requests_account_class_at
//	    ON feedkit_recovery_requests (account, class, at);
//
//	CREATE TABLE IF NOT EXISTS feedkit_recovery_producers (
//	    producer              bigint      PRIMARY KEY,
//	    state                 text        NOT NULL,  -- "disconnected", "recovering" or "healthy"
//	    last_subscribed_at    timestamptz,           -- NULL for the zero time, as the other times
//	    recovery_requested_at timestamptz,
//	    recovery_snapshot_id  bigint      NOT NULL,
//	    recovery_node_id      bigint,                -- NULL for no node
//	    last_disconnected_at  timestamptz
//	);
//	ALTER TABLE feedkit_recovery_producers
//	    ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0;  -- who saved it (FencedStore)
//
// The statements run in one transaction under a transaction-level advisory lock, so
// that processes starting at the same moment do not trip over each other:
// PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a concurrent creation of
// the same table (one of them fails on a unique index of the system catalogs).
//
// # Why the advisory lock in Reserve
//
// Ledger.Reserve must decide and record atomically with respect to every other Reserve
// of the account, in any process: two nodes must never both take the last place in a
// window. Row locks cannot give that, because the rows that would have to conflict are
// the ones not inserted yet; SERIALIZABLE could, at the price of retries. Instead each
// Reserve runs one READ COMMITTED transaction that first takes pg_advisory_xact_lock on a
// hash of the account, then reads the account's requests of the class, decides with
// recovery.Allow (the same function as recovery.MemoryLedger), and inserts. The lock is
// held until commit, so the reservations of one account are serialized across
// processes, and each reads every reservation committed before it. Distinct accounts
// hash apart and do not wait for each other (a hash collision only serializes them).
// A request is counted by the index of its tier (its class) in the Limits it came with,
// so every node of an account must use the same Limits, as the feed's are.
//
// # Times
//
// PostgreSQL keeps timestamps to the microsecond. So that what is decided is what is
// stored, Reserve truncates the request's time to the microsecond before it decides
// (a RetryAt is therefore also whole microseconds), and Store keeps record times
// truncated to the microsecond; times come back in UTC. The zero time is stored as NULL.
// Reserve takes its time from the request, never from the database's clock; the nodes
// of an account should keep their clocks in sync.
package pgstore

import "github.com/feedkit/feedkit/internal/pgschema"

// DefaultTablePrefix is the prefix of the table names when Options.TablePrefix is empty.
const DefaultTablePrefix = "feedkit_recovery_"

// Options configure a Ledger or a Store. The zero value is ready to use.
type Options struct {
	// TablePrefix is prepended to the table and index names: lower-case ASCII letters,
	// digits and underscores, not starting with a digit, at most 38 bytes (so that
	// every name stays within PostgreSQL's 63).
	// Empty means DefaultTablePrefix.
	TablePrefix string
}

// longestName is the longest name built from the prefix.
const longestName = "requests_account_class_at"

// ErrInvalidOptions is returned, wrapped, by NewLedger and NewStore for options that
// cannot be used.
var ErrInvalidOptions = pgschema.ErrInvalidOptions

// prefix validates o and returns the table prefix to use.
func (o Options) prefix() (string, error) {
	return pgschema.Prefix(o.TablePrefix, DefaultTablePrefix, longestName)
}
