package pgschema

import "time"

// PostgreSQL keeps a timestamptz to the microsecond, and pgx truncates a time.Time's
// nanoseconds on the way in; a time read back is in the local zone. The backends convert
// every time on its way in and out with these, so that a time saved and loaded again is
// the same value, in UTC, in every backend, and a bound compares as PostgreSQL will.

// In returns t as a timestamptz column keeps it: to the microsecond, in UTC.
func In(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// InNull returns t for a column where NULL stands for the zero time.
func InNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = In(t)
	return &t
}

// Out returns a stored time in UTC.
func Out(t time.Time) time.Time { return t.UTC() }

// OutNull returns a stored time in UTC, the zero time for NULL.
func OutNull(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// CeilMicro returns t in UTC rounded up to the microsecond, for a bound on a stored time.
// Stored times are whole microseconds, so for them at >= t is at >= CeilMicro(t), and
// at < t is at < CeilMicro(t), where pgx's truncation of t would put a time in the
// microsecond before t on the wrong side of it.
func CeilMicro(t time.Time) time.Time {
	t = t.UTC()
	if r := t.Truncate(time.Microsecond); r.Before(t) {
		return r.Add(time.Microsecond)
	}
	return t
}
