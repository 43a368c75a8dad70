// Package pagesize is the one rule for the page size a caller gives feedkit's APIs, Go
// and HTTP alike (a Limit field, a limit argument, a limit query parameter): 0 means
// Default; from 1 to Max is taken as given; a negative size, or one above Max, is
// refused with an error naming the field, never clamped, so that a caller asking for
// more than it can get learns it at once rather than from a short page.
//
// A caller that needs everything pages through (or asks for a count): no size means
// "all", which would be unbounded.
package pagesize

import (
	"errors"
	"fmt"
)

// The page sizes.
const (
	Default = 100
	Max     = 1000
)

// ErrInvalid is wrapped by the errors of Resolve.
var ErrInvalid = errors.New("page size out of range")

// Resolve returns the page size limit stands for: Default for 0, limit itself from 1 to
// Max. Any other limit gets an error that names field and wraps ErrInvalid.
func Resolve(field string, limit int) (int, error) {
	if limit == 0 {
		return Default, nil
	}
	if limit < 0 || limit > Max {
		return 0, fmt.Errorf("%s %d: %w: %s", field, limit, ErrInvalid, Rule)
	}
	return limit, nil
}

// Rule says what Resolve accepts, for an error or a document.
const Rule = "must be from 1 to 1000, or 0 for 100"
