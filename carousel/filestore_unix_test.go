//go:build unix

package carousel_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
)

// The file is the process's own: no other user may read it, even when it was readable
// by others before the store rewrote it.
func TestFileStoreFileIsTheOwnersOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metadata.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"cycles":[]}`), 0o644))
	require.NoError(t, carousel.NewFileStore(path).Save(context.Background(), metadata("a"), 0))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o077, "mode %v", fi.Mode().Perm())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm()&0o600, "the owner reads and writes it")
}
