//go:build unix

package recovery_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// The file is the process's own: no other user may read it, even when it was readable
// by others before the store rewrote it.
func TestFileStoreFileIsTheOwnersOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "producers.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"producers":[]}`), 0o644))
	require.NoError(t, recovery.NewFileStore(path).Save(context.Background(), record(1)))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o077, "mode %v", fi.Mode().Perm())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm()&0o600, "the owner reads and writes it")
}
