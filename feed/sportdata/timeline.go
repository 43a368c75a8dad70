package sportdata

import "time"

// Timeline is a match's timeline (sport_events/{id}/timeline.xml): the event, its status,
// and what happened in it, in order.
type Timeline struct {
	Event  Event           `json:"event"`
	Status *EventStatus    `json:"status,omitempty"`
	Events []TimelineEvent `json:"events,omitempty"`
}

// TimelineEvent is one thing that happened in a match: a goal, a card, a period's start.
type TimelineEvent struct {
	ID int64 `json:"id"`
	// Type is the API's name for it: "match_started", "score_change", "yellow_card",
	// "period_start", "match_ended", ...
	Type string    `json:"type"`
	Time time.Time `json:"time,omitzero"`
	// MatchTime is the minute of play, MatchClock the clock ("45:00"), where sent.
	MatchTime  *int   `json:"match_time,omitempty"`
	MatchClock string `json:"match_clock,omitempty"`
	// Team is "home" or "away" for what one side did.
	Team       string   `json:"team,omitempty"`
	Period     string   `json:"period,omitempty"`
	PeriodName string   `json:"period_name,omitempty"`
	HomeScore  *float64 `json:"home_score,omitempty"`
	AwayScore  *float64 `json:"away_score,omitempty"`
	// Players are the players it involves (a scorer, an assist), in the API's order.
	Players []Ref `json:"players,omitempty"`
}
