package pgstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/pgschema"
)

// where accumulates the conditions of a query and their arguments.
type where struct {
	conds []string
	args  []any
}

// arg adds v to the arguments and returns its placeholder.
func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

func (w *where) add(cond string) { w.conds = append(w.conds, cond) }

// sql returns the WHERE clause, or "" for no condition.
func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return ` WHERE ` + strings.Join(w.conds, ` AND `)
}

// filter adds the conditions selecting q's items, its collection when the table is
// shared and its window, and returns the expression of the modified time to order by.
func (s *Source) filter(w *where, q carousel.Query) (modified string) {
	if s.collection != "" {
		w.add(s.collection + ` = ` + w.arg(q.Collection))
	}
	if !q.Windowed() {
		return s.modified
	}
	modified = s.modified
	if q.Start.IsZero() {
		// A NULL time reads as the zero time, which such a window contains. Only then is
		// the column wrapped, which keeps an index on it from serving: windows from the
		// zero time are not what a scheduler asks for.
		modified = `COALESCE(` + s.modified + `, ` + w.arg(time.Time{}) + `)`
	}
	// Both bounds always, even a zero one, as Query.Contains does: a zero End is a
	// window that ends before year 1, i.e. nothing.
	w.add(modified + ` >= ` + w.arg(pgschema.CeilMicro(q.Start)))
	w.add(modified + ` < ` + w.arg(pgschema.CeilMicro(q.End)))
	return modified
}

// keyset adds the condition selecting the items after after in q's order (Query.Less).
// modified is the expression filter returned.
func (s *Source) keyset(w *where, q carousel.Query, modified string, after carousel.Item) {
	if !q.Windowed() {
		w.add(s.id + ` > ` + w.arg(after.ID))
		return
	}
	m := after.Modified.UTC()
	if c := pgschema.CeilMicro(m); !c.Equal(m) {
		// Stored times are whole microseconds: none equals m, so every item from the next
		// microsecond on is after it, whatever its id.
		w.add(modified + ` >= ` + w.arg(c))
		return
	}
	w.add(`(` + modified + `, ` + s.id + `) > (` + w.arg(m) + `, ` + w.arg(after.ID) + `)`)
}
