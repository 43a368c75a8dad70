package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/workflow"
)

// A bad config is refused at construction, naming the field; a bad request names its
// field too.
func TestBadConfigAndRequestsNameTheField(t *testing.T) {
	store := workflow.NewMemoryStore()
	cases := []struct {
		cfg  workflow.Config
		want string
	}{
		{workflow.Config{Actors: map[string]workflow.ActorPrefs{"pay": {WorkTimeout: -1}}}, `Config.Actors["pay"].WorkTimeout`},
		{workflow.Config{Actors: map[string]workflow.ActorPrefs{"pay": {TaskTimeout: -1}}}, `Config.Actors["pay"].TaskTimeout`},
		{workflow.Config{Actors: map[string]workflow.ActorPrefs{"pay": {Retry: workflow.RetryPolicy{MaxAttempts: -1}}}}, `Config.Actors["pay"].Retry.MaxAttempts`},
		{workflow.Config{Actors: map[string]workflow.ActorPrefs{"pay": {Retry: workflow.RetryPolicy{Initial: time.Minute, Max: time.Second}}}}, `Config.Actors["pay"].Retry`},
		{workflow.Config{Processes: map[string]workflow.ProcessPrefs{"order": {IdleTimeout: -1}}}, `Config.Processes["order"]`},
		{workflow.Config{ScanInterval: -1}, "Config.ScanInterval"},
		{workflow.Config{ScanBatch: -1}, "Config.ScanBatch -1"},
		{workflow.Config{ScanBatch: workflow.MaxLimit + 1}, "Config.ScanBatch 1001"},
	}
	for _, c := range cases {
		_, err := workflow.New(store, c.cfg)
		assert.ErrorContains(t, err, c.want)
	}
	_, err := workflow.New(nil, workflow.Config{})
	assert.ErrorContains(t, err, "store is nil")
	e, err := workflow.New(store, workflow.Config{})
	require.NoError(t, err)
	_, _, err = e.Start(t.Context(), workflow.StartRequest{Start: workflow.TaskSpec{ActorType: "x"}})
	assert.ErrorContains(t, err, "StartRequest.Type is empty")
	_, _, err = e.Start(t.Context(), workflow.StartRequest{Type: "order"})
	assert.ErrorContains(t, err, "StartRequest.Start.ActorType is empty")
	for _, key := range []string{strings.Repeat("k", workflow.MaxIdempotencyKeyLen+1), "order\x00 1", "order \xff"} {
		_, _, err = e.Start(t.Context(), workflow.StartRequest{Type: "order", IdempotencyKey: key, Start: workflow.TaskSpec{ActorType: "x"}})
		assert.ErrorContains(t, err, "StartRequest.IdempotencyKey", "%q", key)
	}
	_, total, err := e.Search(t.Context(), workflow.Query{})
	require.NoError(t, err)
	assert.Zero(t, total, "no request refused made a process")
	_, created, err := e.Start(t.Context(), workflow.StartRequest{Type: "order", IdempotencyKey: strings.Repeat("k", workflow.MaxIdempotencyKeyLen),
		Start: workflow.TaskSpec{ActorType: "x"}})
	require.NoError(t, err, "a key of the greatest length")
	assert.True(t, created)
	assert.ErrorIs(t, e.Release(t.Context(), workflow.Decision{TaskID: "none"}), workflow.ErrNotFound)
}
