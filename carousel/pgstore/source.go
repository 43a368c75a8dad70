package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/carousel"
)

// SourceOptions say where the items of each collection are. The zero value reads each
// collection from the table of its name, with columns id and last_modified.
type SourceOptions struct {
	// Table, when set, is the one table every collection is read from; CollectionColumn
	// must then be set, to tell the collections apart. When empty, a collection is read
	// from the table of its own name (unless Tables maps it).
	Table string
	// Tables maps collections to tables, overriding Table and the collection's name.
	Tables map[string]string
	// IDColumn is the items' id column; "" is "id". Any type with a cast to text will do
	// (text, integer, uuid): ids are compared and ordered as text, byte by byte.
	IDColumn string
	// ModifiedColumn is the items' last-modified column, timestamptz (or timestamp,
	// read as UTC); "" is "last_modified".
	ModifiedColumn string
	// CollectionColumn, when set, is a column holding each row's collection: only the
	// rows whose column equals the collection's name are its items.
	CollectionColumn string
	// Schema qualifies the table names; "" leaves them to the connection's search_path.
	Schema string
}

// Default column names of SourceOptions.
const (
	DefaultIDColumn       = "id"
	DefaultModifiedColumn = "last_modified"
)

var _ carousel.Source = (*Source)(nil)

// Source is a carousel.Source over PostgreSQL tables. It is safe for concurrent use.
type Source struct {
	pool *pgxpool.Pool

	schema     string            // checked, unquoted; "" for the search_path
	table      string            // quoted shared table; "" for one table per collection
	tables     map[string]string // collection → quoted table
	id         string            // the id column as text in byte order, for SELECT, WHERE and ORDER BY
	modified   string            // quoted
	collection string            // quoted; "" for none
}

// NewSource returns a Source on pool, which stays the caller's to close. It checks the
// names in opts, not that the tables exist: a missing table fails the queries of its
// collection.
func NewSource(pool *pgxpool.Pool, opts SourceOptions) (*Source, error) {
	bad := func(field, value string, problem error) (*Source, error) {
		return nil, fmt.Errorf("pgstore: SourceOptions.%s %q %v: %w", field, value, problem, ErrInvalidOptions)
	}
	if pool == nil {
		return nil, fmt.Errorf("pgstore: NewSource: pool is nil: %w", ErrInvalidOptions)
	}
	if opts.IDColumn == "" {
		opts.IDColumn = DefaultIDColumn
	}
	if opts.ModifiedColumn == "" {
		opts.ModifiedColumn = DefaultModifiedColumn
	}
	type field struct{ name, value string }
	names := []field{{"IDColumn", opts.IDColumn}, {"ModifiedColumn", opts.ModifiedColumn}}
	for _, f := range []field{{"Schema", opts.Schema}, {"CollectionColumn", opts.CollectionColumn}, {"Table", opts.Table}} {
		if f.value != "" { // optional
			names = append(names, f)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(opts.Tables)) {
		names = append(names, field{fmt.Sprintf("Tables[%q]", c), opts.Tables[c]})
	}
	for _, f := range names {
		if err := checkIdent(f.value); err != nil {
			return bad(f.name, f.value, err)
		}
	}
	if opts.Table != "" && opts.CollectionColumn == "" {
		return bad("CollectionColumn", "", errors.New("is required when Table is set: every collection shares the table"))
	}
	s := &Source{
		pool:     pool,
		schema:   opts.Schema,
		tables:   make(map[string]string, len(opts.Tables)),
		id:       `(` + quote("", opts.IDColumn) + `::text COLLATE "C")`,
		modified: quote("", opts.ModifiedColumn),
	}
	if opts.Table != "" {
		s.table = quote(opts.Schema, opts.Table)
	}
	if opts.CollectionColumn != "" {
		s.collection = quote("", opts.CollectionColumn)
	}
	for c, t := range opts.Tables {
		s.tables[c] = quote(opts.Schema, t)
	}
	return s, nil
}

// tableOf returns the quoted table the items of collection are in.
func (s *Source) tableOf(collection string) (string, error) {
	if t, ok := s.tables[collection]; ok {
		return t, nil
	}
	if s.table != "" {
		return s.table, nil
	}
	if err := checkIdent(collection); err != nil {
		return "", fmt.Errorf("pgstore: collection %q is read from the table of its name, which %v; map it with SourceOptions.Tables", collection, err)
	}
	return quote(s.schema, collection), nil
}

// Count implements carousel.Source.
func (s *Source) Count(ctx context.Context, q carousel.Query) (int, error) {
	table, err := s.tableOf(q.Collection)
	if err != nil {
		return 0, err
	}
	var w where
	s.filter(&w, q)
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+table+w.sql(), w.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: count collection %q in %s: %w", q.Collection, table, err)
	}
	return int(n), nil
}

// List implements carousel.Source.
func (s *Source) List(ctx context.Context, q carousel.Query, after carousel.Item, limit int) ([]carousel.Item, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("pgstore: Source.List: limit %d must be positive", limit)
	}
	table, err := s.tableOf(q.Collection)
	if err != nil {
		return nil, err
	}
	var w where
	modified := s.filter(&w, q)
	order := s.id
	if q.Windowed() {
		order = modified + `, ` + s.id
	}
	if after.ID != "" || !after.Modified.IsZero() { // the zero Item is before every item
		s.keyset(&w, q, modified, after)
	}
	sql := `SELECT ` + s.id + `, ` + s.modified + ` FROM ` + table + w.sql() +
		` ORDER BY ` + order + ` LIMIT ` + w.arg(int64(limit))
	rows, err := s.pool.Query(ctx, sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list collection %q from %s: %w", q.Collection, table, err)
	}
	defer rows.Close()
	items := make([]carousel.Item, 0, min(limit, 1024)) // limit bounds the answer, not the allocation
	for rows.Next() {
		var (
			id       string
			modified *time.Time // NULL is the zero time: such an item is in no window
		)
		if err := rows.Scan(&id, &modified); err != nil {
			return nil, fmt.Errorf("pgstore: list collection %q from %s: %w", q.Collection, table, err)
		}
		it := carousel.Item{ID: id}
		if modified != nil {
			it.Modified = modified.UTC()
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: list collection %q from %s: %w", q.Collection, table, err)
	}
	return items, nil
}
