package pgschema_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/internal/pgschema"
)

var paris = time.FixedZone("Paris", 3600)

func TestIn(t *testing.T) {
	got := pgschema.In(time.Date(2026, 3, 1, 13, 0, 0, 123_456_789, paris))
	assert.Equal(t, time.Date(2026, 3, 1, 12, 0, 0, 123_456_000, time.UTC), got)
	assert.Equal(t, time.UTC, got.Location())
}

func TestInNull(t *testing.T) {
	assert.Nil(t, pgschema.InNull(time.Time{}))
	got := pgschema.InNull(time.Date(2026, 3, 1, 13, 0, 0, 999, paris))
	if assert.NotNil(t, got) {
		assert.Equal(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), *got)
	}
}

func TestOut(t *testing.T) {
	stored := time.Date(2026, 3, 1, 13, 0, 0, 1000, paris)
	assert.Equal(t, time.Date(2026, 3, 1, 12, 0, 0, 1000, time.UTC), pgschema.Out(stored))
	assert.Equal(t, time.Date(2026, 3, 1, 12, 0, 0, 1000, time.UTC), pgschema.OutNull(&stored))
	assert.Equal(t, time.Time{}, pgschema.OutNull(nil), "NULL is the zero time")
}

func TestCeilMicro(t *testing.T) {
	for _, c := range []struct{ in, want time.Time }{
		{time.Date(2026, 3, 1, 13, 0, 0, 5_000, paris), time.Date(2026, 3, 1, 12, 0, 0, 5_000, time.UTC)},
		{time.Date(2026, 3, 1, 13, 0, 0, 5_001, paris), time.Date(2026, 3, 1, 12, 0, 0, 6_000, time.UTC)},
		{time.Date(2026, 3, 1, 13, 0, 0, 999_999_999, paris), time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC)},
		{time.Time{}, time.Time{}},
	} {
		got := pgschema.CeilMicro(c.in)
		assert.Equal(t, c.want, got, "%v", c.in)
		assert.Equal(t, time.UTC, got.Location())
	}
}
