package testenv

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookPathIn is an exec.LookPath that finds only the programs in found, by name.
func lookPathIn(found map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		if p, ok := found[name]; ok {
			return p, nil
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
}

func TestFindChromium(t *testing.T) {
	onPath := map[string]string{"chromium": "/usr/bin/chromium"}
	tests := []struct {
		name     string
		env      map[string]string
		found    map[string]string
		wantPath string
		want     verdict
		inMsg    string
	}{
		{"on PATH", nil, onPath, "/usr/bin/chromium", use, ""},
		{"on PATH under CI", map[string]string{CIVar: "true"}, onPath, "/usr/bin/chromium", use, ""},
		{"missing", nil, nil, "", skip, "apt-get install chromium"},
		{"missing under CI", map[string]string{CIVar: "true"}, nil, "", fail, "CI=true"},
		{"variable names it", map[string]string{ChromiumVar: " google-chrome "},
			map[string]string{"google-chrome": "/opt/google/chrome"}, "/opt/google/chrome", use, ""},
		{"variable blank", map[string]string{ChromiumVar: " "}, onPath, "/usr/bin/chromium", use, ""},
		{"variable names nothing", map[string]string{ChromiumVar: "/nope/chrome"}, onPath, "", fail, ChromiumVar + "=/nope/chrome"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, v, msg := findChromium(lookupFrom(tt.env), lookPathIn(tt.found))
			assert.Equal(t, tt.wantPath, path)
			assert.Equal(t, tt.want, v)
			if tt.want == use {
				assert.Empty(t, msg)
			} else {
				assert.Contains(t, msg, tt.inMsg)
			}
		})
	}
}

func TestChromiumSkipsOrFails(t *testing.T) {
	t.Setenv(ChromiumVar, "/nonexistent/feedkit-test/chromium")
	f := &fakeTB{TB: t}
	require.False(t, f.run(func() { Chromium(f) }))
	assert.True(t, f.failed, "a variable naming no program fails even outside CI")

	t.Setenv(ChromiumVar, "sh") // any program on PATH will do
	f = &fakeTB{TB: t}
	var got string
	require.True(t, f.run(func() { got = Chromium(f) }))
	want, err := exec.LookPath("sh")
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
