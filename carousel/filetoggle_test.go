package carousel_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
)

func TestFileToggleReadsTheFile(t *testing.T) {
	cases := map[string]bool{
		"true": true, "TRUE\n": true, "  True \r\n": true, "1": true, "on": true, "Active": true,
		"false": false, "False\n": false, "0": false, "OFF": false, "passive\n": false,
	}
	path := filepath.Join(t.TempDir(), "active")
	tg := carousel.NewFileToggle(path)
	for content, want := range cases {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		got, _, err := tg.Active(context.Background())
		require.NoError(t, err, "%q", content)
		assert.Equal(t, want, got, "%q", content)
	}
}

func TestFileToggleMissingFileIsPassive(t *testing.T) {
	got, gen, err := carousel.NewFileToggle(filepath.Join(t.TempDir(), "never-written")).Active(context.Background())
	require.NoError(t, err)
	assert.False(t, got)
	assert.Zero(t, gen)
}

// An activation's generation is the time the file was written: a later write that makes
// an instance active, on this machine or another, is a later activation; passive has none.
func TestFileToggleGenerationIsTheTimeOfTheWrite(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	ta, tb := carousel.NewFileToggle(a), carousel.NewFileToggle(b)
	write := func(path, content string, at time.Time) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		// Set, not left to the file system: its timestamps may be coarser than the steps here.
		require.NoError(t, os.Chtimes(path, at, at))
	}
	ask := func(tg *carousel.FileToggle) (bool, carousel.Generation) {
		t.Helper()
		active, gen, err := tg.Active(context.Background())
		require.NoError(t, err)
		return active, gen
	}
	t1 := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC)

	write(a, "true\n", t1)
	write(b, "false\n", t1)
	active, genA1 := ask(ta)
	assert.True(t, active)
	assert.Equal(t, carousel.Generation(t1.UnixNano()), genA1)
	_, again := ask(ta)
	assert.Equal(t, genA1, again, "the same activation while the file is unchanged")
	active, gen := ask(tb)
	assert.False(t, active)
	assert.Zero(t, gen, "passive")

	// The operator switches to b, then back to a.
	write(a, "false\n", t1.Add(time.Minute))
	write(b, "true\n", t1.Add(time.Minute+time.Second))
	_, genB := ask(tb)
	assert.Greater(t, genB, genA1, "b's activation comes after a's")
	write(b, "false\n", t1.Add(2*time.Minute))
	write(a, "on\n", t1.Add(2*time.Minute+time.Second))
	_, genA2 := ask(ta)
	assert.Greater(t, genA2, genB, "a's second activation comes after b's")
}

func TestFileToggleRefusesOtherContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "active")
	tg := carousel.NewFileToggle(path)
	for _, content := range []string{"", "yes", "true false", "tru"} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		got, _, err := tg.Active(context.Background())
		require.Error(t, err, "%q", content)
		assert.False(t, got)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), `"`+content+`"`)
	}

	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("z", 10000)), 0o644))
	_, _, err := tg.Active(context.Background())
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300, "a large file is not quoted whole")
}

func TestFileToggleUnreadableFile(t *testing.T) {
	path := t.TempDir() // a directory cannot be read as a file
	_, _, err := carousel.NewFileToggle(path).Active(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}

func TestFileToggleSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "active")
	tg := carousel.NewFileToggle(path)
	for _, want := range []bool{true, false, true} {
		require.NoError(t, tg.Set(want))
		got, _, err := tg.Active(context.Background())
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "true\n", string(b), "what an operator would write")

	err = carousel.NewFileToggle(filepath.Join(path, "not-a-dir", "active")).Set(true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(path, "not-a-dir", "active"))
}
