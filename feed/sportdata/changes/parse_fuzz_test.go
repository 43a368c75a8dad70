package changes_test

import (
	"strings"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// ParseChanges never panics, and what it accepts is what the manager relies on: a kind
// the root names, an event, and a time in UTC to the microsecond; an error starts with
// the package's name.
func FuzzParseChanges(f *testing.F) {
	f.Add([]byte(fixtureChanges))
	f.Add([]byte(`<result_changes><result_change sport_event_id="vf:match:-7" update_time="2024-10-16T10:20:35.1234567+00:00"/>` +
		`<result_change sport_event_id="sr:match:2" update_time="2024-10-16T10:20:35"/><other/></result_changes>`))
	f.Add([]byte(`<response response_code="FORBIDDEN"/>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := changes.ParseChanges(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "changes: ") {
				t.Fatalf("error %q does not name the package", err)
			}
			return
		}
		for i, c := range list {
			if c.Kind != list[0].Kind || (c.Kind != changes.FixtureChange && c.Kind != changes.ResultChange) {
				t.Fatalf("change %d: kind %v in a list of %v", i, c.Kind, list[0].Kind)
			}
			if c.Event.IsZero() {
				t.Fatalf("change %d: no event", i)
			}
			if c.UpdatedAt.Location() != time.UTC || !c.UpdatedAt.Equal(c.UpdatedAt.Truncate(time.Microsecond)) {
				t.Fatalf("change %d: time %v not UTC to the microsecond", i, c.UpdatedAt)
			}
		}
	})
}
