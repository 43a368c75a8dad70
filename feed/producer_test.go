package feed_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
)

func TestDefaultProducersAreValidAndDistinct(t *testing.T) {
	ps := feed.DefaultProducers()
	require.NotEmpty(t, ps)
	ids, paths, names := map[int]bool{}, map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		assert.NoError(t, p.Validate(), "%d %s", p.ID, p.Name)
		assert.False(t, ids[p.ID], "id %d is unique", p.ID)
		assert.False(t, paths[p.APIPath], "APIPath %q is unique", p.APIPath)
		assert.False(t, names[p.Name], "name %q is unique", p.Name)
		ids[p.ID], paths[p.APIPath], names[p.Name] = true, true, true
		assert.NotEmpty(t, p.Description, "%s", p.Name)
		assert.Equal(t, feed.DefaultHeartbeatLimit(p.Scope), p.HeartbeatLimit, "%s", p.Name)
	}
}

func TestDefaultProducersHeartbeatLimits(t *testing.T) {
	for _, p := range feed.DefaultProducers() {
		want := 15 * time.Second
		if p.Scope == feed.ScopePrematch {
			want = 5 * time.Minute
		}
		assert.Equal(t, want, p.HeartbeatLimit, "%s (%s)", p.Name, p.Scope)
	}
	known := map[int]time.Duration{
		1: 15 * time.Second, // LO: live
		3: 5 * time.Minute,  // Ctrl: prematch
		5: 15 * time.Second, // PremiumCricket: live and prematch
		6: 15 * time.Second, // VF: virtual
		7: 5 * time.Minute,  // WNS: prematch
	}
	for id, want := range known {
		p, ok := feed.LookupProducer(feed.DefaultProducers(), id)
		require.True(t, ok, "producer %d", id)
		assert.Equal(t, want, p.HeartbeatLimit, "%s", p.Name)
	}
}

func TestDefaultProducersReturnsANewSliceEachTime(t *testing.T) {
	a := feed.DefaultProducers()
	a[0].APIPath = "changed"
	b := feed.DefaultProducers()
	assert.Equal(t, "liveodds", b[0].APIPath)
}

func TestDefaultHeartbeatLimit(t *testing.T) {
	tests := []struct {
		scope feed.Scope
		want  time.Duration
	}{
		{feed.ScopeLive, feed.LiveHeartbeatLimit},
		{feed.ScopeVirtual, feed.LiveHeartbeatLimit},
		{feed.ScopeLive | feed.ScopePrematch, feed.LiveHeartbeatLimit},
		{feed.ScopePrematch | feed.ScopeVirtual, feed.LiveHeartbeatLimit},
		{feed.ScopePrematch, feed.PrematchHeartbeatLimit},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, feed.DefaultHeartbeatLimit(tt.scope), "%s", tt.scope)
	}
	assert.Equal(t, 15*time.Second, feed.LiveHeartbeatLimit)
	assert.Equal(t, 5*time.Minute, feed.PrematchHeartbeatLimit)
}

func TestLookupProducer(t *testing.T) {
	ps := feed.DefaultProducers()

	p, ok := feed.LookupProducer(ps, 3)
	require.True(t, ok)
	assert.Equal(t, "Ctrl", p.Name)
	assert.Equal(t, "pre", p.APIPath)
	assert.Equal(t, feed.ScopePrematch, p.Scope)

	for _, id := range []int{0, 2, -1, 1000} {
		p, ok = feed.LookupProducer(ps, id)
		assert.False(t, ok, "producer %d", id)
		assert.Equal(t, feed.Producer{}, p)
	}
	_, ok = feed.LookupProducer(nil, 1)
	assert.False(t, ok, "an empty list has no producer")

	custom := []feed.Producer{{ID: 1, Name: "Mine", APIPath: "mine"}}
	p, ok = feed.LookupProducer(custom, 1)
	require.True(t, ok)
	assert.Equal(t, "mine", p.APIPath, "the list given, not the defaults")
}

func TestProducerValidateNamesTheField(t *testing.T) {
	valid := feed.Producer{ID: 1, Name: "LO", APIPath: "liveodds", Scope: feed.ScopeLive,
		MaxRecoveryWindow: time.Hour, HeartbeatLimit: time.Second}
	require.NoError(t, valid.Validate())
	tests := []struct {
		name   string
		modify func(*feed.Producer)
		want   string
	}{
		{"zero ID", func(p *feed.Producer) { p.ID = 0 }, "ID 0 must be positive"},
		{"negative ID", func(p *feed.Producer) { p.ID = -4 }, "ID -4 must be positive"},
		{"empty Name", func(p *feed.Producer) { p.Name = "" }, "Name is empty"},
		{"empty APIPath", func(p *feed.Producer) { p.APIPath = "" }, "APIPath is empty"},
		{"empty Scope", func(p *feed.Producer) { p.Scope = 0 }, "Scope is empty"},
		{"zero MaxRecoveryWindow", func(p *feed.Producer) { p.MaxRecoveryWindow = 0 }, "MaxRecoveryWindow 0s must be positive"},
		{"negative MaxRecoveryWindow", func(p *feed.Producer) { p.MaxRecoveryWindow = -time.Minute }, "MaxRecoveryWindow -1m0s must be positive"},
		{"zero HeartbeatLimit", func(p *feed.Producer) { p.HeartbeatLimit = 0 }, "HeartbeatLimit 0s must be positive"},
		{"negative HeartbeatLimit", func(p *feed.Producer) { p.HeartbeatLimit = -time.Second }, "HeartbeatLimit -1s must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid
			tt.modify(&p)
			err := p.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestScopeString(t *testing.T) {
	tests := []struct {
		scope feed.Scope
		want  string
	}{
		{0, "none"},
		{feed.ScopeLive, "live"},
		{feed.ScopePrematch, "prematch"},
		{feed.ScopeVirtual, "virtual"},
		{feed.ScopeLive | feed.ScopePrematch, "live|prematch"},
		{feed.ScopePrematch | feed.ScopeVirtual, "prematch|virtual"},
		{feed.ScopeLive | feed.ScopePrematch | feed.ScopeVirtual, "live|prematch|virtual"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.scope.String(), "scope %d", uint8(tt.scope))
	}
}
