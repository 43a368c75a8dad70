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

// A record the store cannot decode (here, of a state it does not know) makes the file
// unreadable, naming the file and the value; what every file store refuses alike is
// tested in internal/jsonfile.
func TestFileStoreRefusesAnUnknownState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "producers.json")
	content := `{"version":1,"producers":[{"producer":1,"state":"asleep"}]}`
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	s := recovery.NewFileStore(path)
	_, err := s.Load(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "recovery: file store "+path+": ")
	assert.Contains(t, err.Error(), `unknown state "asleep"`)
	require.Error(t, s.Save(context.Background(), record(1)))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(b), "not overwritten")
}
