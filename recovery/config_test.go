package recovery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// NewManager refuses a config it cannot apply, naming the field at fault.
func TestConfigErrorsNameTheField(t *testing.T) {
	noName := lo
	noName.Name = ""
	noWindow := lo
	noWindow.MaxRecoveryWindow = 0
	w := []recovery.Window{{Length: time.Hour, Max: 1}}
	cases := []struct {
		name string
		cfg  recovery.Config
		want []string // every one must be in the message
	}{
		{"negative MaxRecoveryLength", recovery.Config{MaxRecoveryLength: -time.Second}, []string{"Config.MaxRecoveryLength", "-1s"}},
		{"negative AssumedDowntime", recovery.Config{AssumedDowntime: -1}, []string{"Config.AssumedDowntime"}},
		{"negative CheckInterval", recovery.Config{CheckInterval: -time.Second}, []string{"Config.CheckInterval"}},
		{"negative RecoveryTimeout", recovery.Config{RecoveryTimeout: -time.Minute}, []string{"Config.RecoveryTimeout"}},
		{"negative RetryInitial", recovery.Config{RetryInitial: -time.Second}, []string{"Config.RetryInitial"}},
		{"negative RetryMax", recovery.Config{RetryMax: -time.Second}, []string{"Config.RetryMax"}},
		{"RetryMax below RetryInitial", recovery.Config{RetryInitial: 2 * time.Second, RetryMax: time.Second}, []string{"Config.RetryMax"}},
		{"RetryInitial above the default RetryMax", recovery.Config{RetryInitial: time.Hour}, []string{"Config.RetryMax"}},
		{"HeartbeatLimits of an unknown producer", recovery.Config{HeartbeatLimits: map[int]time.Duration{99: time.Second}},
			[]string{"Config.HeartbeatLimits[99]", "no such producer"}},
		{"zero HeartbeatLimits", recovery.Config{HeartbeatLimits: map[int]time.Duration{1: 0}}, []string{"Config.HeartbeatLimits[1]", "positive"}},
		{"negative HeartbeatLimits", recovery.Config{HeartbeatLimits: map[int]time.Duration{3: -time.Minute}}, []string{"Config.HeartbeatLimits[3]"}},
		{"duplicate producer ids", recovery.Config{Producers: []feed.Producer{lo, pre, lo}}, []string{"Config.Producers[2]", "producer 1 listed twice"}},
		{"producer without a name", recovery.Config{Producers: []feed.Producer{pre, noName}}, []string{"Config.Producers[1]", "Name"}},
		{"producer without a recovery window", recovery.Config{Producers: []feed.Producer{noWindow}}, []string{"Config.Producers[0]", "MaxRecoveryWindow"}},
		{"empty Limits", recovery.Config{Limits: recovery.Limits{}}, []string{"Config.Limits", "empty"}},
		{"Limits window of length 0", recovery.Config{Limits: recovery.Limits{{Windows: []recovery.Window{{Length: 0, Max: 1}}}}},
			[]string{"Config.Limits[0].Windows[0]"}},
		{"Limits tier without windows", recovery.Config{Limits: recovery.Limits{{Windows: w}, {MinLength: time.Hour}}},
			[]string{"Config.Limits[1].Windows"}},
		{"Limits MaxLength under MinLength", recovery.Config{Limits: recovery.Limits{{MinLength: time.Hour, MaxLength: time.Minute, Windows: w}}},
			[]string{"Config.Limits[0].MaxLength"}},
		// A number without its unit is nanoseconds: each duration has a floor that catches it.
		{"RecoveryTimeout without a unit", recovery.Config{RecoveryTimeout: 60},
			[]string{"Config.RecoveryTimeout 60ns is under the minimum of 1s", "60 * time.Second?"}},
		{"RecoveryTimeout under a second", recovery.Config{RecoveryTimeout: 999 * time.Millisecond},
			[]string{"Config.RecoveryTimeout 999ms is under the minimum of 1s"}},
		{"MaxRecoveryLength without a unit", recovery.Config{MaxRecoveryLength: 60}, []string{"Config.MaxRecoveryLength 60ns", "minimum of 1m0s"}},
		{"AssumedDowntime without a unit", recovery.Config{AssumedDowntime: 600}, []string{"Config.AssumedDowntime 600ns", "minimum of 1s"}},
		{"CheckInterval without a unit", recovery.Config{CheckInterval: 15}, []string{"Config.CheckInterval 15ns", "minimum of 1ms", "15 * time.Second?"}},
		{"RetryInitial without a unit", recovery.Config{RetryInitial: 1}, []string{"Config.RetryInitial 1ns", "minimum of 1ms"}},
		{"RetryMax without a unit", recovery.Config{RetryMax: 120}, []string{"Config.RetryMax 120ns", "minimum of 1ms"}},
		{"MaxProcessingDelay without a unit", recovery.Config{MaxProcessingDelay: 20}, []string{"Config.MaxProcessingDelay 20ns", "minimum of 1ms"}},
		{"HeartbeatLimits without a unit", recovery.Config{HeartbeatLimits: map[int]time.Duration{1: 15}},
			[]string{"Config.HeartbeatLimits[1] 15ns is under the minimum of 1ms", "15 * time.Second?"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, c.cfg)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.True(t, strings.HasPrefix(err.Error(), "recovery: "), err.Error())
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The zero config is valid, and so are the values that mean "off" or "default".
func TestConfigDefaultsAreAccepted(t *testing.T) {
	for _, cfg := range []recovery.Config{
		{},
		{MaxProcessingDelay: -1},
		{Producers: []feed.Producer{}},
		{HeartbeatLimits: map[int]time.Duration{1: time.Second, 3: time.Hour}},
		{RetryInitial: time.Minute, RetryMax: time.Minute},
		// Each floor itself is accepted.
		{MaxRecoveryLength: time.Minute, AssumedDowntime: time.Second, CheckInterval: time.Millisecond, RecoveryTimeout: time.Second,
			RetryInitial: time.Millisecond, RetryMax: time.Millisecond, MaxProcessingDelay: time.Millisecond,
			HeartbeatLimits: map[int]time.Duration{1: time.Millisecond}},
	} {
		m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, cfg)
		require.NoError(t, err, "%+v", cfg)
		require.NoError(t, m.Close(context.Background()))
	}
}

// Each session takes its handler before Open; after it, the sessions are fixed and
// asking for one more is a programming error.
func TestSystemHandlerAfterOpenPanics(t *testing.T) {
	r := newRig(t, recovery.Config{}, withSessions(2))
	assert.PanicsWithValue(t, "recovery: SystemHandler after Open: every session takes its handler before",
		func() { r.m.SystemHandler() })
}

// The node given to NewManager is recorded with each request: in what the manager asks of
// the Ledger, and in the producer's record, which the Store keeps.
func TestNewManagerNodeIsRecordedWithRequests(t *testing.T) {
	led := newCountingLedger(recovery.NewMemoryLedger())
	r := newRig(t, recovery.Config{Ledger: led}, withNode(feed.Node(42)))
	r.alive(1, true)
	c := r.recovered()
	reserves, _ := led.calls()
	require.Equal(t, 1, reserves)
	assert.Equal(t, feed.Node(42), led.lastReserve().Node)
	st := r.state(1)
	assert.Equal(t, c.id, st.RecoverySnapshotID)
	assert.Equal(t, feed.Node(42), st.RecoveryNodeID)
}
