//go:build unix

package atomicfile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/atomicfile"
)

// The umask is process-wide: this test must not run in parallel with others that create files.
func TestWriteFileSetsPermission(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))

	require.NoError(t, atomicfile.WriteFile(path, []byte("y"), 0o600))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the new file has perm, not the old file's")

	require.NoError(t, atomicfile.WriteFile(path, []byte("z"), 0o666))
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "the umask applies, as for os.WriteFile")
}
