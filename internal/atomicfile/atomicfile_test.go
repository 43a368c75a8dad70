package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/atomicfile"
)

// names lists the directory, so that a test sees any temporary file left behind.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")

	require.NoError(t, atomicfile.WriteFile(path, []byte("first"), 0o644))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "first", string(b))

	require.NoError(t, atomicfile.WriteFile(path, []byte("second, longer than the first"), 0o644))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "second, longer than the first", string(b))

	require.NoError(t, atomicfile.WriteFile(path, nil, 0o644))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Empty(t, b)

	assert.Equal(t, []string{"state.json"}, names(t, dir), "no temporary file is left behind")
}

func TestWriteFileMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "state.json")
	err := atomicfile.WriteFile(path, []byte("x"), 0o644)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "no-such-dir", "the error names where it tried to write")
}

// A rename that fails (here: over a directory that is not empty) leaves what was at path
// and removes the temporary file.
func TestWriteFileFailedRenameLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), []byte("keep"), 0o644))

	err := atomicfile.WriteFile(path, []byte("x"), 0o644)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.Equal(t, []string{"taken"}, names(t, dir))
	b, err := os.ReadFile(filepath.Join(path, "inside"))
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
}
