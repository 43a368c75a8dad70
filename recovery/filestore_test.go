package recovery_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// record returns a record of producer p with every field set.
func record(p int) recovery.Record {
	return recovery.Record{
		Producer: p, State: recovery.Recovering,
		LastSubscribedAt:    time.Date(2026, 3, 1, 11, 0, 0, 123456789, time.UTC),
		RecoveryRequestedAt: time.Date(2026, 3, 1, 11, 1, 0, 0, time.UTC),
		RecoverySnapshotID:  42,
	}
}

func TestFileStoreSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "producers.json")
	first := recovery.NewFileStore(path)
	require.NoError(t, first.Save(ctx, record(3)))
	require.NoError(t, first.Save(ctx, record(1)))

	got, err := recovery.NewFileStore(path).Load(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []recovery.Record{record(1), record(3)}, got)

	var file struct {
		Version   int `json:"version"`
		Producers []struct {
			Producer int `json:"producer"`
		} `json:"producers"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &file))
	assert.Equal(t, 1, file.Version)
	require.Len(t, file.Producers, 2)
	assert.Equal(t, 1, file.Producers[0].Producer, "producers are sorted")
	assert.Equal(t, 3, file.Producers[1].Producer)
}

func TestFileStoreMissingFileIsEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "producers.json")
	got, err := recovery.NewFileStore(path).Load(context.Background())
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "Load does not write")
}

// A file the store cannot read whole is refused, naming the file and what is wrong, and
// never overwritten; once repaired, the same store reads it.
func TestFileStoreRefusesBadFiles(t *testing.T) {
	cases := map[string]struct{ content, want string }{
		"not JSON":      {`{"version":1,"producers":[`, "unexpected end of JSON input"},
		"empty":         {``, "unexpected end of JSON input"},
		"no version":    {`{"producers":[]}`, "version 0, want 1"},
		"later version": {`{"version":2,"producers":[]}`, "version 2, want 1"},
		"duplicate producer": {`{"version":1,"producers":[{"producer":1,"state":"healthy"},{"producer":1,"state":"disconnected"}]}`,
			`producers[1].producer 1 appears twice`},
		"bad state": {`{"version":1,"producers":[{"producer":1,"state":"asleep"}]}`, "asleep"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "producers.json")
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o600))
			s := recovery.NewFileStore(path)

			_, err := s.Load(ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "recovery: file store "+path)
			assert.Contains(t, err.Error(), c.want)

			require.Error(t, s.Save(ctx, record(1)), "Save must not overwrite a file it could not read")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, c.content, string(b))

			require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"producers":[]}`), 0o600))
			got, err := s.Load(ctx)
			require.NoError(t, err)
			assert.Empty(t, got)
		})
	}
}

func TestFileStoreRollsBackWhenTheWriteFails(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "producers.json")
	s := recovery.NewFileStore(path)
	require.NoError(t, s.Save(ctx, record(1)))

	require.NoError(t, os.RemoveAll(dir)) // every write fails now
	changed := record(1)
	changed.RecoverySnapshotID = 99
	err := s.Save(ctx, changed)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "recovery: file store "+path)
	require.Error(t, s.Save(ctx, record(2)))

	got, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, []recovery.Record{record(1)}, got, "a failed save changes nothing")
}
