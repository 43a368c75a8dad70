package pagesize

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, c := range []struct{ in, want int }{{0, Default}, {1, 1}, {Default, Default}, {Max, Max}} {
		got, err := Resolve("Query.Limit", c.in)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%d) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []int{-1, -Max, Max + 1, 1 << 40} {
		got, err := Resolve("Query.Limit", bad)
		if !errors.Is(err, ErrInvalid) || got != 0 {
			t.Errorf("Resolve(%d) = %d, %v; want ErrInvalid", bad, got, err)
			continue
		}
		if !strings.Contains(err.Error(), "Query.Limit") {
			t.Errorf("Resolve(%d): %v does not name the field", bad, err)
		}
	}
}

func TestRuleSaysTheSizes(t *testing.T) {
	if want := fmt.Sprintf("must be from 1 to %d, or 0 for %d", Max, Default); Rule != want {
		t.Errorf("Rule = %q, want %q", Rule, want)
	}
}
