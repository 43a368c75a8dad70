package main

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The summary covers the whole run: with -restart, the figures of the first process are
// added to those of the second, every one of them. The test goes over the fields of
// figures, so that a figure added to the summary and left out of the sum fails it.
func TestFiguresAddSumsEveryFigure(t *testing.T) {
	f := figures{system: 1, connectionDowns: 2, requested: 3, completed: 4, deferred: 5, workers: []uint64{6, 7}}
	g := figures{system: 10, connectionDowns: 20, requested: 30, completed: 40, deferred: 50, workers: []uint64{60, 70}}
	sum := f.add(g)
	fv, gv, sv := reflect.ValueOf(f), reflect.ValueOf(g), reflect.ValueOf(sum)
	for i := range fv.NumField() {
		name := fv.Type().Field(i).Name
		a, b, s := fv.Field(i), gv.Field(i), sv.Field(i)
		switch a.Kind() {
		case reflect.Uint64:
			require.NotZero(t, a.Uint(), "set %s in the figures above", name)
			assert.Equal(t, a.Uint()+b.Uint(), s.Uint(), name)
		case reflect.Slice:
			require.NotZero(t, a.Len(), "set %s in the figures above", name)
			require.Equal(t, a.Len(), s.Len(), name)
			for j := range a.Len() {
				assert.Equal(t, a.Index(j).Uint()+b.Index(j).Uint(), s.Index(j).Uint(), "%s[%d]", name, j)
			}
		default:
			t.Errorf("figures.%s is a %v: sum it in add, then here", name, a.Kind())
		}
	}
	// The summed figures start empty: adding the first process's keeps them whole.
	assert.Equal(t, f, figures{}.add(f))
	assert.Equal(t, f, f.add(figures{}))
}
