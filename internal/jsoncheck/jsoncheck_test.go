package jsoncheck_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsoncheck"
)

type key struct{ A, B int }

type inner struct {
	Count int `json:"count"`
	Leak  int
}

type bad struct {
	Good    int              `json:"good_name"`
	NoTag   int              // a Go name would leak
	Camel   int              `json:"camelCase"`
	Skipped int              `json:"-"`
	Nested  []inner          `json:"nested"`
	ByKey   map[key]int      `json:"by_key"`
	When    time.Time        `json:"when"`
	Embed                    // flattened: its fields are checked as bad's
	Any     func()           `json:"any"`
	Ok      map[string]inner `json:"ok"`
}

type Embed struct {
	Flat int
}

func TestProblemsNamesEveryLeak(t *testing.T) {
	got := jsoncheck.Problems(reflect.TypeFor[bad]())
	assert.ElementsMatch(t, []string{
		"jsoncheck_test.bad.NoTag has no json name",
		`jsoncheck_test.bad.Camel is named "camelCase", not snake_case`,
		"jsoncheck_test.bad.nested[].Leak has no json name",
		"jsoncheck_test.bad.by_key: map key jsoncheck_test.key has no text form",
		"jsoncheck_test.bad.Flat has no json name",
		"jsoncheck_test.bad.any: func() does not encode to JSON",
	}, got)
}

type good struct {
	N     uint64            `json:"n"`
	S     string            `json:"s"`
	T     time.Time         `json:"t"`
	D     time.Duration     `json:"d_ns"`
	P     *int              `json:"p"`
	L     []int             `json:"l"`
	M     map[string]uint64 `json:"m"`
	Level level             `json:"level"`
}

// level is an enum with a text form of two values.
type level uint8

func (l level) MarshalText() ([]byte, error) {
	if l > 1 {
		return nil, assert.AnError
	}
	return []byte([]string{"low", "high"}[l]), nil
}

func (l *level) UnmarshalText(b []byte) error {
	*l = map[string]level{"low": 0, "high": 1}[string(b)]
	return nil
}

func TestFilledSetsEveryFieldAndRoundTrips(t *testing.T) {
	v := jsoncheck.Filled[good]()
	assert.NotZero(t, v.N)
	assert.NotZero(t, v.S)
	assert.NotZero(t, v.T)
	assert.NotZero(t, v.D)
	require.NotNil(t, v.P)
	assert.Len(t, v.L, 1)
	assert.Len(t, v.M, 1)
	assert.Equal(t, level(1), v.Level, "the first value the enum can marshal")
	b := jsoncheck.RoundTrip(t, v)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Len(t, m, 8)
}

func TestRoundTripFailsOnALeak(t *testing.T) {
	ft := &fakeT{}
	jsoncheck.RoundTrip(ft, inner{Count: 1, Leak: 2})
	assert.Equal(t, []string{"jsoncheck_test.inner.Leak has no json name"}, ft.errors)
}

// fakeT records what a check reports, to test the check.
type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Error(args ...any)     { f.errors = append(f.errors, args[0].(string)) }
func (f *fakeT) Errorf(string, ...any) { f.errors = append(f.errors, "round trip") }
