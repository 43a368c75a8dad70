package recovery_test

import (
	"context"
	"fmt"
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
	t.Setenv(recovery.EnabledEnv, "")
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
		{"negative Sessions", recovery.Config{Sessions: -1}, []string{"Config.Sessions", "-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Requester = &fakeAPI{}
			m, err := recovery.NewManager(c.cfg)
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
	t.Setenv(recovery.EnabledEnv, "")
	for _, cfg := range []recovery.Config{
		{},
		{MaxProcessingDelay: -1},
		{Producers: []feed.Producer{}},
		{HeartbeatLimits: map[int]time.Duration{1: time.Second, 3: time.Hour}},
		{Sessions: 3, RetryInitial: time.Minute, RetryMax: time.Minute},
	} {
		cfg.Requester = &fakeAPI{}
		m, err := recovery.NewManager(cfg)
		require.NoError(t, err, "%+v", cfg)
		require.NoError(t, m.Close(context.Background()))
	}
}

// SystemHandler(i) takes 0 <= i < Sessions; anything else is a programming error.
func TestSystemHandlerOutOfRangePanics(t *testing.T) {
	for _, sessions := range []int{0, 1, 3} {
		r := newRig(t, recovery.Config{Sessions: sessions})
		n := max(sessions, 1)
		for i := range n {
			assert.NotPanics(t, func() { r.m.SystemHandler(i) }, "sessions %d, handler %d", sessions, i)
		}
		for _, i := range []int{-1, n, n + 5} {
			assert.PanicsWithValue(t, fmt.Sprintf("recovery: SystemHandler(%d) of a manager of %d sessions", i, n),
				func() { r.m.SystemHandler(i) }, "sessions %d, handler %d", sessions, i)
		}
	}
}
