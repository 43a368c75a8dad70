package carousel_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		got, err := tg.Active(context.Background())
		require.NoError(t, err, "%q", content)
		assert.Equal(t, want, got, "%q", content)
	}
}

func TestFileToggleMissingFileIsPassive(t *testing.T) {
	got, err := carousel.NewFileToggle(filepath.Join(t.TempDir(), "never-written")).Active(context.Background())
	require.NoError(t, err)
	assert.False(t, got)
}

func TestFileToggleRefusesOtherContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "active")
	tg := carousel.NewFileToggle(path)
	for _, content := range []string{"", "yes", "true false", "tru"} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		got, err := tg.Active(context.Background())
		require.Error(t, err, "%q", content)
		assert.False(t, got)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), `"`+content+`"`)
	}

	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("z", 10000)), 0o644))
	_, err := tg.Active(context.Background())
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300, "a large file is not quoted whole")
}

func TestFileToggleUnreadableFile(t *testing.T) {
	path := t.TempDir() // a directory cannot be read as a file
	_, err := carousel.NewFileToggle(path).Active(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}

func TestFileToggleSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "active")
	tg := carousel.NewFileToggle(path)
	for _, want := range []bool{true, false, true} {
		require.NoError(t, tg.Set(want))
		got, err := tg.Active(context.Background())
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
