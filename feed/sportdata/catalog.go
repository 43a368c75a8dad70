package sportdata

import (
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Category is a category of a sport: a country, or a kind of competition ("International
// Clubs", "Men").
type Category struct {
	ID          feed.URN `json:"id"`
	Name        Text     `json:"name"`
	CountryCode string   `json:"country_code,omitempty"`
}

// SportCategories is a sport with its categories (sports/{id}/categories.xml).
type SportCategories struct {
	Sport      Ref        `json:"sport"`
	Categories []Category `json:"categories,omitempty"`
}

// Tournament is a tournament as the tournament list describes it.
type Tournament struct {
	ID       feed.URN `json:"id"`
	Name     Text     `json:"name"`
	Sport    Ref      `json:"sport"`
	Category Category `json:"category"`
	// CurrentSeason is the season under way or coming next; nil where the API names
	// none.
	CurrentSeason *Season `json:"current_season,omitempty"`
}

// Season is one season of a tournament.
type Season struct {
	ID         feed.URN  `json:"id"`
	Name       Text      `json:"name"`
	StartDate  time.Time `json:"start_date,omitzero"`
	EndDate    time.Time `json:"end_date,omitzero"`
	Year       string    `json:"year,omitempty"` // "26/27", "2026"
	Tournament feed.URN  `json:"tournament,omitzero"`
}

// TournamentSeasons is a tournament with its seasons (tournaments/{id}/seasons.xml).
type TournamentSeasons struct {
	Tournament Tournament `json:"tournament"`
	Seasons    []Season   `json:"seasons,omitempty"`
}
