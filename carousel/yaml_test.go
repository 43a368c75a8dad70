package carousel

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goodYAML = `
cycles:
  - name: methode-whole
    type: ThrottledWholeCollection
    origin: methode-web-pub
    collection: methode
    coolDown: 5m
    throttle: 15s
  - name: wordpress-hour
    type: FixedWindow
    origin: wordpress
    collection: wordpress
    coolDown: 5m
    timeWindow: 1h
    minimumThrottle: 1m
  - name: video-scaling
    type: ScalingWindow
    origin: next-video
    collection: video
    coolDown: 1m
    timeWindow: 10m
    minimumThrottle: 1s
    maximumThrottle: 1m
`

func TestParseConfig(t *testing.T) {
	cs, err := ParseConfig(strings.NewReader(goodYAML))
	require.NoError(t, err)
	assert.Equal(t, []CycleConfig{
		{Name: "methode-whole", Type: ThrottledWholeCollection, Origin: "methode-web-pub", Collection: "methode", CoolDown: 5 * time.Minute, Throttle: 15 * time.Second},
		{Name: "wordpress-hour", Type: FixedWindow, Origin: "wordpress", Collection: "wordpress", CoolDown: 5 * time.Minute, TimeWindow: time.Hour, MinimumThrottle: time.Minute},
		{Name: "video-scaling", Type: ScalingWindow, Origin: "next-video", Collection: "video", CoolDown: time.Minute, TimeWindow: 10 * time.Minute, MinimumThrottle: time.Second, MaximumThrottle: time.Minute},
	}, cs)

	path := filepath.Join(t.TempDir(), "cycles.yml")
	require.NoError(t, os.WriteFile(path, []byte(goodYAML), 0o600))
	fromFile, err := LoadConfigFile(path)
	require.NoError(t, err)
	assert.Equal(t, cs, fromFile)
	_, err = LoadConfigFile(filepath.Join(t.TempDir(), "missing.yml"))
	assert.ErrorContains(t, err, "missing.yml")
}

// fields returns the fields a config error names.
func fields(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	var out []string
	for _, e := range joinedErrors(err) {
		for _, inner := range joinedErrors(e) {
			var fe *FieldError
			if errors.As(inner, &fe) {
				out = append(out, fe.Field)
			}
		}
	}
	return out
}

func TestParseConfigNamesEveryBadField(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
		msg        string
	}{
		{"empty file", ``, []string{"cycles"}, "cycles is required"},
		{"no cycles", "cycles: []\n", []string{"cycles"}, "at least one"},
		{"everything missing", "cycles:\n  - {}\n", []string{"cycles[0].name", "cycles[0].type", "cycles[0].origin", "cycles[0].collection", "cycles[0].coolDown"}, "cycles[0].name is required"},
		{"unknown type", "cycles:\n  - {name: a, type: Weekly, origin: o, collection: c, coolDown: 1m}\n", []string{"cycles[0].type"}, `cycles[0].type "Weekly" must be ThrottledWholeCollection, FixedWindow or ScalingWindow`},
		{"whole collection without throttle", "cycles:\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: c, coolDown: 1m}\n", []string{"cycles[0].throttle"}, "cycles[0].throttle is required"},
		{"bad duration", "cycles:\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: c, coolDown: 1m, throttle: fast}\n", []string{"cycles[0].throttle"}, `cycles[0].throttle "fast" is not a duration`},
		{"duration without unit", "cycles:\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: c, coolDown: 1m, throttle: 15}\n", []string{"cycles[0].throttle"}, `"15" is not a duration`},
		{"negative", "cycles:\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: c, coolDown: -1m, throttle: 1s}\n", []string{"cycles[0].coolDown"}, "must be positive"},
		{"window without its fields", "cycles:\n  - {name: a, type: ScalingWindow, origin: o, collection: c, coolDown: 1m}\n", []string{"cycles[0].timeWindow", "cycles[0].minimumThrottle", "cycles[0].maximumThrottle"}, "cycles[0].timeWindow is required"},
		{"maximum below minimum", "cycles:\n  - {name: a, type: ScalingWindow, origin: o, collection: c, coolDown: 1m, timeWindow: 1h, minimumThrottle: 1m, maximumThrottle: 1s}\n", []string{"cycles[0].maximumThrottle"}, "must be at least minimumThrottle"},
		{"bad name", "cycles:\n  - {name: 'a b/c', type: ThrottledWholeCollection, origin: o, collection: c, coolDown: 1m, throttle: 1s}\n", []string{"cycles[0].name"}, "letters, digits"},
		{"repeated name", "cycles:\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: c, coolDown: 1m, throttle: 1s}\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: d, coolDown: 1m, throttle: 1s}\n", []string{"cycles[1].name"}, "repeats cycles[0].name"},
		{"second cycle bad, first fine", "cycles:\n  - {name: a, type: ThrottledWholeCollection, origin: o, collection: c, coolDown: 1m, throttle: 1s}\n  - {name: b, type: FixedWindow, origin: o, collection: c, coolDown: 1m, timeWindow: 1h}\n", []string{"cycles[1].minimumThrottle"}, "cycles[1].minimumThrottle is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(strings.NewReader(tc.yaml))
			assert.ElementsMatch(t, tc.want, fields(t, err))
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	t.Run("unknown field", func(t *testing.T) {
		_, err := ParseConfig(strings.NewReader("cycles:\n  - {name: a, throtle: 1s}\n"))
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.ErrorContains(t, err, "throtle")
	})
	t.Run("not YAML", func(t *testing.T) {
		_, err := ParseConfig(strings.NewReader("cycles: [\n"))
		assert.ErrorIs(t, err, ErrInvalidConfig)
	})
}

func TestCycleConfigJSONRoundTrip(t *testing.T) {
	cs, err := ParseConfig(strings.NewReader(goodYAML))
	require.NoError(t, err)
	for _, c := range cs {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		var back CycleConfig
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, c, back)
	}
	b, _ := json.Marshal(cs[1])
	assert.JSONEq(t, `{"name":"wordpress-hour","type":"FixedWindow","origin":"wordpress","collection":"wordpress","coolDown":"5m0s","timeWindow":"1h0m0s","minimumThrottle":"1m0s"}`, string(b))

	var c CycleConfig
	err = json.Unmarshal([]byte(`{"name":"x","type":"FixedWindow","origin":"o","collection":"c","coolDown":"1m","timeWindow":"soon","minimumThrottle":"1s"}`), &c)
	assert.Equal(t, []string{"timeWindow"}, fields(t, err))
	err = json.Unmarshal([]byte(`{"name":"x","speed":"1s"}`), &c)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, "speed")
}

func TestMetadataJSONRoundTrip(t *testing.T) {
	m := CycleMetadata{CycleID: "c", Config: wholeCfg, Iteration: 3, Total: 10, Completed: 4, Errors: 1, CurrentItem: "x",
		Last: Item{ID: "x", Modified: t0}, WindowStart: t0.Add(-time.Hour), WindowEnd: t0, IterationStart: t0, IterationEnd: t0.Add(-time.Minute),
		Throttle: 90 * time.Second, States: []State{Running, Unhealthy}, LastError: "boom", UpdatedAt: t0}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"progress":0.4`)
	assert.Contains(t, string(b), `"throttle":"1m30s"`)
	var back CycleMetadata
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m, back)
	assert.Equal(t, 0.4, back.Progress())
	assert.Equal(t, 1.0, CycleMetadata{Total: 2, Completed: 3}.Progress(), "clamped: items added during the iteration")
	assert.Equal(t, 0.0, CycleMetadata{}.Progress())
}
