package sportdata

import (
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The values a Provider returns share their slices with its cache: treat them as
// read-only. Every optional attribute is kept apart from its zero value: a nil pointer,
// a zero time or an empty string or Text means the API did not send it.

// Ref is an entity an event refers to by id and name: its sport, category, tournament or
// season.
type Ref struct {
	ID   feed.URN `json:"id"`
	Name Text     `json:"name"`
}

// Competitor is a team or a player as an event lists it.
type Competitor struct {
	ID           feed.URN `json:"id"`
	Name         Text     `json:"name"`
	Abbreviation string   `json:"abbreviation,omitempty"`
	// Qualifier is "home" or "away" in a match; empty where the event has no sides.
	Qualifier   string `json:"qualifier,omitempty"`
	Country     Text   `json:"country"`
	CountryCode string `json:"country_code,omitempty"`
	Gender      string `json:"gender,omitempty"`
}

// Venue is where an event takes place.
type Venue struct {
	ID          feed.URN `json:"id"`
	Name        Text     `json:"name"`
	City        Text     `json:"city"`
	Country     Text     `json:"country"`
	CountryCode string   `json:"country_code,omitempty"`
	Capacity    *int     `json:"capacity,omitempty"`
	// MapCoordinates are "latitude,longitude" as the API writes them.
	MapCoordinates string `json:"map_coordinates,omitempty"`
}

// Event is what the summary, the fixture and the schedules say of one sport event.
type Event struct {
	ID feed.URN `json:"id"`
	// Name is the event's own name, which stages, seasons and outrights have; a match
	// is named after its competitors.
	Name Text `json:"name"`
	// Scheduled and ScheduledEnd are the planned start and end (zero when not sent).
	Scheduled    time.Time `json:"scheduled,omitzero"`
	ScheduledEnd time.Time `json:"scheduled_end,omitzero"`
	// StartTimeTBD is true while the start time is still to be decided.
	StartTimeTBD *bool `json:"start_time_tbd,omitempty"`
	// LiveOdds says whether the event is booked for live odds ("booked", "bookable",
	// "buyable", "not_available").
	LiveOdds    string       `json:"liveodds,omitempty"`
	Sport       Ref          `json:"sport"`
	Category    Ref          `json:"category"`
	Tournament  Ref          `json:"tournament"`
	Season      Ref          `json:"season"`
	Competitors []Competitor `json:"competitors,omitempty"`
	Venue       *Venue       `json:"venue,omitempty"`
}

// Home returns the competitor qualified as home, if any.
func (e *Event) Home() (Competitor, bool) { return e.side("home") }

// Away returns the competitor qualified as away, if any.
func (e *Event) Away() (Competitor, bool) { return e.side("away") }

func (e *Event) side(q string) (Competitor, bool) {
	for _, c := range e.Competitors {
		if c.Qualifier == q {
			return c, true
		}
	}
	return Competitor{}, false
}

// Summary is an event's summary (sport_events/{id}/summary.xml): the event, and for a
// match or a stage its status as the API knows it. The summary of a season or a
// tournament describes it as a tournament: Event.ID is the season's (or the
// tournament's) and Event.Name its name.
type Summary struct {
	Event  Event        `json:"event"`
	Status *EventStatus `json:"status,omitempty"`
}

// EventStatus is the status part of a summary.
type EventStatus struct {
	// Status is the event's status ("not_started", "live", "closed", "ended", ...).
	Status string `json:"status"`
	// MatchStatus is the match's phase ("1st_half", "ended", ...), where sent.
	MatchStatus string   `json:"match_status,omitempty"`
	HomeScore   *float64 `json:"home_score,omitempty"`
	AwayScore   *float64 `json:"away_score,omitempty"`
	// Winner is the winning competitor of an event that has one.
	Winner feed.URN `json:"winner,omitzero"`
}

// Fixture is an event's fixture (sport_events/{id}/fixture.xml): the event with its
// confirmed start, its coverage and broadcast details. After a fixture_change the
// Provider reads fixture_change_fixture.xml, which the API serves uncached.
type Fixture struct {
	Event Event `json:"event"`
	// StartTime is the start as last confirmed, and StartTimeConfirmed whether it is.
	StartTime          time.Time `json:"start_time,omitzero"`
	StartTimeConfirmed *bool     `json:"start_time_confirmed,omitempty"`
	// NextLiveTime is when the event goes live next (a match played over days).
	NextLiveTime time.Time `json:"next_live_time,omitzero"`
	// Status is the fixture's event status ("not_started", "live", ...).
	Status     string      `json:"status,omitempty"`
	TVChannels []TVChannel `json:"tv_channels,omitempty"`
	// ExtraInfo is the fixture's key/value details, in the API's order.
	ExtraInfo []Info `json:"extra_info,omitempty"`
	// ReferenceIDs are the event's ids in other systems (name "BetradarCtrl", ...).
	ReferenceIDs []Info `json:"reference_ids,omitempty"`
}

// TVChannel is a channel broadcasting an event.
type TVChannel struct {
	Name      string    `json:"name"`
	StartTime time.Time `json:"start_time,omitzero"`
	StreamURL string    `json:"stream_url,omitempty"`
}

// Info is a key and its value.
type Info struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}
