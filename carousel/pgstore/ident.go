package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/feedkit/feedkit/internal/pgschema"
)

// ErrInvalidOptions is returned, wrapped, by NewSource, NewStore and NewLease for options
// that cannot be used; the message names the field.
var ErrInvalidOptions = pgschema.ErrInvalidOptions

// maxIdentLen is PostgreSQL's limit on a name; a longer one would be truncated silently
// and name another table or column than the one configured.
const maxIdentLen = 63

// checkIdent reports why s cannot be a table, column or schema name, or nil. Names are
// quoted as well, so the check is not what keeps SQL out: it turns a typo (a dot, a
// space, a dash) into an error at construction instead of a confusing one at the first
// query.
func checkIdent(s string) error {
	if s == "" {
		return fmt.Errorf("is empty")
	}
	if len(s) > maxIdentLen {
		return fmt.Errorf("is longer than %d bytes", maxIdentLen)
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return fmt.Errorf("must be ASCII letters, digits and underscores, not starting with a digit")
		}
	}
	return nil
}

// quote returns the SQL of a checked name, qualified by schema when schema is not empty.
func quote(schema, name string) string {
	if schema == "" {
		return pgx.Identifier{name}.Sanitize()
	}
	return pgx.Identifier{schema, name}.Sanitize()
}
