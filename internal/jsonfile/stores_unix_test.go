//go:build unix

package jsonfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each store's file is its owner's only, even when it was readable by others before the
// store rewrote it: it is the process's state.
func TestStoresFileIsTheOwnersOnly(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			require.NoError(t, os.WriteFile(path, []byte(st.empty), 0o644))
			require.NoError(t, st.open(path).save(1))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Zero(t, fi.Mode().Perm()&0o077, "mode %v", fi.Mode().Perm())
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm()&0o600, "the owner reads and writes it")
		})
	}
}
