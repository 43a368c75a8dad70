//go:build unix

package jsonfile_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonfile"
)

// A file made readable by others before the store rewrote it is the owner's only after.
func TestSaveMode(t *testing.T) {
	f := file(t)
	require.NoError(t, os.WriteFile(f.Path, []byte(`{"version":3}`), 0o644))
	require.NoError(t, f.Save(&doc{}))
	fi, err := os.Stat(f.Path)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o077, "mode %v", fi.Mode().Perm())
	assert.Equal(t, jsonfile.Mode, fi.Mode().Perm()&jsonfile.Mode, "the owner reads and writes it")
}
