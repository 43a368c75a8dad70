// Package pgstore keeps the carousel's state in PostgreSQL: a Source that lists the
// items of collections from the application's own tables, a Store of cycle metadata, so
// that a restarted or failed-over instance resumes its cycles where the last active
// instance saved them, and a Lease that makes exactly one of several instances active
// and numbers its activations, with which the Store fences the saves. All run on a
// *pgxpool.Pool (pgx v5) that the caller owns and closes.
//
// # Source
//
// A Source reads two columns of a table: an id (SourceOptions.IDColumn, default "id")
// and a last-modified time (SourceOptions.ModifiedColumn, default "last_modified"). A
// collection is read from the table of its name, from the table SourceOptions.Tables
// maps it to, or, with SourceOptions.Table, from one table shared by every collection,
// where SourceOptions.CollectionColumn tells the collections apart. Names are checked
// at construction (ASCII letters, digits and underscores) and quoted in the SQL, so they
// match the table's exactly: a table created without quotes has a lower-case name.
//
// The queries follow carousel.Query. The id is compared and ordered as text in byte
// order, (id::text COLLATE "C"), as Go compares strings, whatever the column's type and
// the database's collation: an integer id 10 comes before 9. A whole collection is read
// in id order, resuming with WHERE id > $after; a window with
// WHERE last_modified >= $start AND last_modified < $end, in (last_modified, id) order,
// resuming with the row comparison (last_modified, id) > ($modified, $id). Each page is
// a query of its own, so a cycle sees the rows added or removed meanwhile and never
// holds a snapshot open. Times come back in UTC. PostgreSQL keeps microseconds: the
// bounds of a window are rounded up to the microsecond, which selects exactly the rows
// whose times Query.Contains accepts. A NULL last-modified time reads as the zero time,
// which only a window from the zero time contains. Ids must be unique within a
// collection: the pages resume after an id.
//
// For the pages to be index scans rather than a sort of the table, give the table
// indexes on the expressions the queries use, e.g. for a table items:
//
//	CREATE INDEX ON items ((id::text) COLLATE "C");                 -- whole collections
//	CREATE INDEX ON items (last_modified, (id::text) COLLATE "C");  -- windows
//
// and, for a shared table, the same with the collection column first:
//
//	CREATE INDEX ON items (collection, (id::text) COLLATE "C");
//	CREATE INDEX ON items (collection, last_modified, (id::text) COLLATE "C");
//
// (For a text id column, (id::text) is just id.) The counts are COUNT(*) over the same
// conditions, which the same indexes serve.
//
// # Store
//
// NewStore creates its table if it does not exist, in the schema the pool's search_path
// selects, with the name prefixed by StoreOptions.TablePrefix (default "feedkit_carousel_"):
//
//	CREATE TABLE IF NOT EXISTS feedkit_carousel_cycle_metadata (
//	    id         text        PRIMARY KEY,         -- the cycle id
//	    metadata   json        NOT NULL,            -- carousel.CycleMetadata's JSON
//	    saved_at   timestamptz NOT NULL,            -- the database's clock at the last Save
//	    generation bigint      NOT NULL DEFAULT 0   -- the activation that saved it
//	);
//	ALTER TABLE feedkit_carousel_cycle_metadata ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0;
//
// The statements run in one transaction under a transaction-level advisory lock, so
// that processes starting at the same moment do not trip over each other: PostgreSQL's
// CREATE TABLE IF NOT EXISTS is not safe against a concurrent creation of the same
// table. The ALTER upgrades a table made by an earlier version, whose rows keep loading
// and count as saved by generation 0. The metadata is stored as its JSON, so that it
// reads back exactly as it was saved, nanoseconds, time zone offsets and throttle
// included.
//
// A Save is one INSERT ... ON CONFLICT DO UPDATE ... WHERE generation <= the save's: a
// save of an older generation than the row's updates nothing and returns an error
// wrapping carousel.ErrFenced, so that an instance which lost the Lease cannot overwrite
// the progress of the one holding it, however the two race.
//
// # Lease
//
// A Lease holds pg_try_advisory_lock(hashtextextended(name, 0)), a session-level lock,
// on a connection of its own: the instance holding it is the active one. When its session
// ends the server releases the lock, so a crashed instance does not keep the others
// passive; the instance that lost its connection finds out at its next Active, which
// says false with an error. After a network break the server may keep the old session
// (and the lock) until its TCP keepalive gives up: meanwhile the instance knows the
// holder for its own old session and keeps trying, rather than taking it for another
// instance and staying passive for good. Whether a passive instance takes a free lease
// by itself is LeaseOptions.Failover; without it, only an operator's Promote does, so
// that a failover is a decision rather than a race. Advisory locks are per database, not
// per schema: deployments sharing a database need lease names of their own.
//
// Each time a Lease takes the lock it numbers the activation: on the same connection,
// holding the lock, it bumps the lease's row in a table of its own (created at the first
// Active or Promote, in the schema the pool's search_path selects, its name prefixed by
// LeaseOptions.TablePrefix)
//
//	CREATE TABLE IF NOT EXISTS feedkit_carousel_lease (
//	    name       text   PRIMARY KEY,  -- the lease's name
//	    generation bigint NOT NULL      -- its last activation's number
//	);
//
// and Active and Promote return that carousel.Generation while the lock is held. The
// bump commits before the lock can pass on (the session holds it until it ends), so the
// generations of the successive holders, of any instance, strictly increase: they are
// the fencing tokens of the Store's saves. For that the instances must count in one
// table: the same schema and TablePrefix, as for the Store.
package pgstore
