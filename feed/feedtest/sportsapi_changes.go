package feedtest

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The routes of the Sports API's lists of changes, as patterns for APIRequests.
const (
	// RouteFixtureChanges lists a fixture change for each fixture_change the simulator
	// has published (fixtures/changes.xml).
	RouteFixtureChanges = "GET /v1/sports/{lang}/fixtures/changes.xml"
	// RouteResultChanges lists a result change for each bet_settlement the simulator has
	// published: a match settled again after a rollback is listed again, at the later
	// time (results/changes.xml).
	RouteResultChanges = "GET /v1/sports/{lang}/results/changes.xml"
)

// changesWindow is how far back the lists reach, as the API's reach back a day.
const changesWindow = 24 * time.Hour

// apiTimeLayout writes times as the API does: to the second, with the offset spelled
// out (2024-10-16T10:20:35+00:00).
const apiTimeLayout = "2006-01-02T15:04:05-07:00"

// registerChangesAPI adds the lists of changes to the API's mux.
func (s *Simulator) registerChangesAPI(mux *apiMux) {
	mux.HandleFunc(RouteFixtureChanges, func(w http.ResponseWriter, r *http.Request) {
		s.serveChanges(w, r, feed.MessageFixtureChange, "fixture_changes", "fixture_change")
	})
	mux.HandleFunc(RouteResultChanges, func(w http.ResponseWriter, r *http.Request) {
		s.serveChanges(w, r, feed.MessageBetSettlement, "result_changes", "result_change")
	})
}

// simChange is one entry of a list: an event and the second it changed at.
type simChange struct {
	event feed.URN
	at    time.Time
}

// serveChanges lists the changes the messages of type t of the live stream make, as the
// API's root and entry elements name them. The time of a change is its message's
// timestamp, to the second. The list holds what the history still holds of the last
// 24 hours of the simulator's clock, newest first, an event listed once for each second
// it changed at. It takes the API's query: afterDateTime (RFC 3339) keeps the changes
// after that time, and sportId (sr:sport:1) those of that sport; a query it cannot read
// is refused with 400.
func (s *Simulator) serveChanges(w http.ResponseWriter, r *http.Request, t feed.MessageType, root, entry string) {
	if s.language(w, r) < 0 {
		return
	}
	q := r.URL.Query()
	var after time.Time
	if v := q.Get("afterDateTime"); v != "" {
		var err error
		if after, err = time.Parse(time.RFC3339, v); err != nil {
			writeResponse(w, r, http.StatusBadRequest, fmt.Sprintf("afterDateTime %q is not a date and time (RFC 3339)", v))
			return
		}
	}
	sport := 0
	if v := q.Get("sportId"); v != "" {
		u, err := feed.ParseURN(v)
		if err != nil || u.Type != "sport" {
			writeResponse(w, r, http.StatusBadRequest, fmt.Sprintf("sportId %q is not a sport id (sr:sport:1)", v))
			return
		}
		sport = int(u.ID)
	}
	now := s.clock.Now()
	list := s.changes(t, sport, now.Add(-changesWindow), after)
	startXML(w)
	fmt.Fprintf(w, `<%s xmlns="%s" generated_at="%s">`+"\n", root, unifiedNamespace, now.UTC().Format(apiTimeLayout))
	for _, c := range list {
		fmt.Fprintf(w, `  <%s sport_event_id="%s" update_time="%s"/>`+"\n", entry, c.event, c.at.Format(apiTimeLayout))
	}
	io.WriteString(w, "</"+root+">\n")
}

// changes returns the changes of type t (of the sport, or of every sport for 0) after
// since and after after, newest first, each once.
func (s *Simulator) changes(t feed.MessageType, sport int, since, after time.Time) []simChange {
	seen := make(map[simChange]bool)
	var list []simChange
	s.mu.Lock()
	s.history.each(func(r *record) {
		if !r.isLiveEvent() || r.key.Type != t || (sport != 0 && r.key.SportID != sport) {
			return
		}
		c := simChange{event: r.key.Event, at: time.UnixMilli(r.stamp).UTC().Truncate(time.Second)}
		if !c.at.After(since) || !c.at.After(after) || seen[c] {
			return
		}
		seen[c] = true
		list = append(list, c)
	})
	s.mu.Unlock()
	slices.SortStableFunc(list, func(a, b simChange) int { return cmp.Compare(b.at.UnixNano(), a.at.UnixNano()) })
	return list
}
