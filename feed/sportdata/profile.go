package sportdata

import (
	"time"

	"github.com/feedkit/feedkit/feed"
)

// CompetitorProfile is a team's profile (competitors/{id}/profile.xml): the team and its
// squad.
type CompetitorProfile struct {
	Competitor Competitor `json:"competitor"`
	Players    []Player   `json:"players,omitempty"`
}

// Player is a player as a profile or a squad describes them.
type Player struct {
	ID   feed.URN `json:"id"`
	Name Text     `json:"name"`
	// FullName is the player's full name ("First Last"); Name is as the API lists
	// players ("Last, First").
	FullName     Text      `json:"full_name"`
	Type         string    `json:"type,omitempty"` // position: "goalkeeper", "forward", ...
	DateOfBirth  time.Time `json:"date_of_birth,omitzero"`
	Nationality  Text      `json:"nationality"`
	CountryCode  string    `json:"country_code,omitempty"`
	JerseyNumber *int      `json:"jersey_number,omitempty"`
	Gender       string    `json:"gender,omitempty"`
}
