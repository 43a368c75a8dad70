package topic

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"a.b.c", "a.b.c", true},
		{"a.b.c", "a.b", false},
		{"a.b", "a.b.c", false},
		{"a.*.c", "a.x.c", true},
		{"a.*.c", "a.c", false},
		{"*", "a", true},
		{"*", "a.b", false},
		{"#", "", true},
		{"#", "a.b.c", true},
		{"a.#", "a", true},
		{"a.#", "a.b.c", true},
		{"a.#", "b.a", false},
		{"#.c", "c", true},
		{"#.c", "a.b.c", true},
		{"#.c", "a.b.c.d", false},
		{"a.#.c", "a.c", true},
		{"a.#.c", "a.x.y.c", true},
		{"a.#.#.c", "a.x.c", true},
		{"*.*.*.*.*.*.*.-", "hi.-.live.odds_change.1.sr:match.1234.-", true},
		{"*.*.*.*.*.*.*.-", "hi.-.live.odds_change.1.sr:match.1234.7", false},
		{"*.*.*.*.*.*.*", "-.-.-.snapshot_complete.-.-.-", true},
		{"-.-.-.alive.#", "-.-.-.alive.-.-.-.-", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Compile(tt.pattern).Match(tt.key), "%s ~ %s", tt.pattern, tt.key)
	}
	assert.Equal(t, "a.#", Compile("a.#").String())
}
