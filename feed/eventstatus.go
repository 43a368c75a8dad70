package feed

// SportEventStatus is the state of play that accompanies an odds change.
//
// Most of its attributes are optional and sport-specific, and for most of them zero is a
// value the feed sends (no outs, no balls, a 0 penalty score), so a zero field cannot say
// that the feed left the attribute out. Fields records which optional attributes and
// elements the feed sent; Has asks it. A field whose bit is clear reads zero and means
// "not reported", never "reported as zero". The scores (of the event, its periods and
// its results) are xs:doubles: INF and NaN decode to math.Inf and NaN (test with
// math.IsInf and math.IsNaN).
type SportEventStatus struct {
	// Status is 0 not started, 1 live, 2 suspended, 3 ended, 4 closed, ...; and 0 when the
	// feed left the required attribute out (Header.SchemaViolations has MissingStatus).
	Status int
	// MatchStatus is match_status, the sport-specific phase code; 0 when the feed left it
	// out (MissingMatchStatus).
	MatchStatus int

	// Fields holds a bit for each optional attribute or element below that the feed sent.
	// A status built by hand sets the bits of the fields it fills in (feedtest.Marshal
	// writes only those).
	Fields StatusField

	Reporting int     // 1 live, 0 not available, -1 suspended or contact lost (StatusReporting)
	HomeScore float64 // home_score (StatusHomeScore)
	AwayScore float64 // away_score (StatusAwayScore)

	HomePenaltyScore int  // home_penalty_score (StatusHomePenaltyScore)
	AwayPenaltyScore int  // away_penalty_score (StatusAwayPenaltyScore)
	HomeGameScore    int  // home_gamescore: games in the current set (StatusHomeGameScore)
	AwayGameScore    int  // away_gamescore (StatusAwayGameScore)
	HomeLegScore     int  // home_legscore: darts legs in the current set (StatusHomeLegScore)
	AwayLegScore     int  // away_legscore (StatusAwayLegScore)
	CurrentServer    int  // current_server: 1 home, 2 away (StatusCurrentServer)
	ExpediteMode     bool // expedite_mode (StatusExpediteMode)
	Tiebreak         bool // tiebreak (StatusTiebreak)
	HomeSuspend      int  // home_suspend: players suspended (StatusHomeSuspend)
	AwaySuspend      int  // away_suspend (StatusAwaySuspend)

	Balls        int    // baseball (StatusBalls)
	Strikes      int    // (StatusStrikes)
	Outs         int    // (StatusOuts)
	Bases        string // occupied bases as the feed writes them (StatusBases)
	HomeBatter   int    // (StatusHomeBatter)
	AwayBatter   int    // (StatusAwayBatter)
	Pitcher      string // the pitcher as the feed writes it (StatusPitcher)
	Batter       string // the batter as the feed writes it (StatusBatter)
	PitchCount   int    // pitch_count (StatusPitchCount)
	PitchesSeen  int    // pitches_seen (StatusPitchesSeen)
	TotalHits    int    // total_hits (StatusTotalHits)
	TotalPitches int    // total_pitches (StatusTotalPitches)

	Possession     int // American football: team in possession (StatusPossession)
	Position       int // (StatusPosition)
	Try            int // (StatusTry)
	Yards          int // (StatusYards)
	HomeDriveCount int // home_drive_count (StatusHomeDriveCount)
	AwayDriveCount int // away_drive_count (StatusAwayDriveCount)
	HomePlayCount  int // home_play_count (StatusHomePlayCount)
	AwayPlayCount  int // away_play_count (StatusAwayPlayCount)

	Throw         int // darts (StatusThrow)
	Visit         int // (StatusVisit)
	RemainingReds int // snooker (StatusRemainingReds)

	Delivery           int // bowls (StatusDelivery)
	HomeRemainingBowls int // (StatusHomeRemainingBowls)
	AwayRemainingBowls int // (StatusAwayRemainingBowls)
	CurrentEnd         int // (StatusCurrentEnd)

	Innings         int // cricket (StatusInnings)
	Over            int // (StatusOver)
	HomePenaltyRuns int // (StatusHomePenaltyRuns)
	AwayPenaltyRuns int // (StatusAwayPenaltyRuns)
	HomeDismissals  int // (StatusHomeDismissals)
	AwayDismissals  int // (StatusAwayDismissals)
	// BattingTeam is batting_team: 1 home, 2 away (StatusBattingTeam). The published schema
	// does not declare it; it is read as the schema's other teams are.
	BattingTeam int

	CurrentCTTeam  int // current_ct_team: counter-strike, 1 home, 2 away (StatusCurrentCTTeam)
	PeriodOfLeader int // period_of_leader (StatusPeriodOfLeader)

	Clock        EventClock
	PeriodScores []PeriodScore // period_scores; nil when absent
	Results      []EventResult // results; nil when absent
	Statistics   EventStatistics
}

// Has reports whether the feed sent every optional attribute or element named by f.
func (s *SportEventStatus) Has(f StatusField) bool { return s.Fields&f == f }

// StatusField names one optional attribute or element of a SportEventStatus; the values
// combine as bits.
type StatusField uint64

// The optional attributes and elements of a sport event status.
const (
	StatusReporting StatusField = 1 << iota
	StatusHomeScore
	StatusAwayScore
	StatusHomePenaltyScore
	StatusAwayPenaltyScore
	StatusHomeGameScore
	StatusAwayGameScore
	StatusHomeLegScore
	StatusAwayLegScore
	StatusCurrentServer
	StatusExpediteMode
	StatusTiebreak
	StatusHomeSuspend
	StatusAwaySuspend
	StatusBalls
	StatusStrikes
	StatusOuts
	StatusBases
	StatusHomeBatter
	StatusAwayBatter
	StatusPossession
	StatusPosition
	StatusTry
	StatusYards
	StatusThrow
	StatusVisit
	StatusRemainingReds
	StatusDelivery
	StatusHomeRemainingBowls
	StatusAwayRemainingBowls
	StatusCurrentEnd
	StatusInnings
	StatusOver
	StatusHomePenaltyRuns
	StatusAwayPenaltyRuns
	StatusHomeDismissals
	StatusAwayDismissals
	StatusCurrentCTTeam
	StatusClockStopped   // clock/@stopped
	StatusYellowCards    // statistics/yellow_cards
	StatusRedCards       // statistics/red_cards
	StatusYellowRedCards // statistics/yellow_red_cards
	StatusCorners        // statistics/corners
	// The bits below came later. They follow the others so that those keep their values.
	StatusPitcher
	StatusBatter
	StatusPitchCount
	StatusPitchesSeen
	StatusTotalHits
	StatusTotalPitches
	StatusHomeDriveCount
	StatusAwayDriveCount
	StatusHomePlayCount
	StatusAwayPlayCount
	StatusBattingTeam
	StatusPeriodOfLeader
	StatusGreenCards // statistics/green_cards
	StatusTries      // statistics/tries
)

// EventClock is the match clock of a live event. Its times are strings as the feed writes
// them ("75:02", or minutes alone); an empty one was not sent (the feed never sends an
// empty time). Stopped is meaningful only with StatusClockStopped set.
type EventClock struct {
	MatchTime             string // such as "75:02"
	StoppageTime          string
	StoppageTimeAnnounced string
	RemainingTime         string
	RemainingTimeInPeriod string
	Stopped               bool
}

// PeriodScore is the score of one period of an event. The schema requires all four
// attributes; one the feed left out reads 0, and the message's Header.SchemaViolations
// says so (MissingPeriodNumber, MissingPeriodMatchStatusCode, MissingPeriodScore).
type PeriodScore struct {
	Number          int
	MatchStatusCode int
	HomeScore       float64
	AwayScore       float64
}

// EventResult is one result of an event (results/result): the score at the phase named by
// MatchStatusCode, such as after overtime or penalties. The schema requires all three
// attributes; one the feed left out reads 0, and the message's Header.SchemaViolations
// says so (MissingResultMatchStatusCode, MissingResultScore).
type EventResult struct {
	MatchStatusCode int
	HomeScore       float64
	AwayScore       float64
}

// EventStatistics holds the statistics element of a status. Each count is meaningful
// only with its bit (StatusYellowCards, StatusRedCards, StatusYellowRedCards,
// StatusCorners, StatusGreenCards, StatusTries) set in SportEventStatus.Fields: zero
// cards is a count the feed sends. A count that lacks its home or away number gets no
// bit (MissingStatisticsCount).
type EventStatistics struct {
	YellowCards    TeamCounts
	RedCards       TeamCounts
	YellowRedCards TeamCounts
	Corners        TeamCounts
	GreenCards     TeamCounts
	// Tries is the tries element, which the published schema does not declare; it is
	// read as the other counts are.
	Tries TeamCounts
}

// TeamCounts is a count per team.
type TeamCounts struct {
	Home int
	Away int
}

// intField returns the int field of s that the attribute name fills and its bit, or nil.
func (s *SportEventStatus) intField(name string) (*int, StatusField) {
	switch name {
	case "reporting":
		return &s.Reporting, StatusReporting
	case "home_penalty_score":
		return &s.HomePenaltyScore, StatusHomePenaltyScore
	case "away_penalty_score":
		return &s.AwayPenaltyScore, StatusAwayPenaltyScore
	case "home_gamescore":
		return &s.HomeGameScore, StatusHomeGameScore
	case "away_gamescore":
		return &s.AwayGameScore, StatusAwayGameScore
	case "home_legscore":
		return &s.HomeLegScore, StatusHomeLegScore
	case "away_legscore":
		return &s.AwayLegScore, StatusAwayLegScore
	case "current_server":
		return &s.CurrentServer, StatusCurrentServer
	case "home_suspend":
		return &s.HomeSuspend, StatusHomeSuspend
	case "away_suspend":
		return &s.AwaySuspend, StatusAwaySuspend
	case "balls":
		return &s.Balls, StatusBalls
	case "strikes":
		return &s.Strikes, StatusStrikes
	case "outs":
		return &s.Outs, StatusOuts
	case "home_batter":
		return &s.HomeBatter, StatusHomeBatter
	case "away_batter":
		return &s.AwayBatter, StatusAwayBatter
	case "possession":
		return &s.Possession, StatusPossession
	case "position":
		return &s.Position, StatusPosition
	case "try":
		return &s.Try, StatusTry
	case "yards":
		return &s.Yards, StatusYards
	case "throw":
		return &s.Throw, StatusThrow
	case "visit":
		return &s.Visit, StatusVisit
	case "remaining_reds":
		return &s.RemainingReds, StatusRemainingReds
	case "delivery":
		return &s.Delivery, StatusDelivery
	case "home_remaining_bowls":
		return &s.HomeRemainingBowls, StatusHomeRemainingBowls
	case "away_remaining_bowls":
		return &s.AwayRemainingBowls, StatusAwayRemainingBowls
	case "current_end":
		return &s.CurrentEnd, StatusCurrentEnd
	case "innings":
		return &s.Innings, StatusInnings
	case "over":
		return &s.Over, StatusOver
	case "home_penalty_runs":
		return &s.HomePenaltyRuns, StatusHomePenaltyRuns
	case "away_penalty_runs":
		return &s.AwayPenaltyRuns, StatusAwayPenaltyRuns
	case "home_dismissals":
		return &s.HomeDismissals, StatusHomeDismissals
	case "away_dismissals":
		return &s.AwayDismissals, StatusAwayDismissals
	case "current_ct_team":
		return &s.CurrentCTTeam, StatusCurrentCTTeam
	case "pitch_count":
		return &s.PitchCount, StatusPitchCount
	case "pitches_seen":
		return &s.PitchesSeen, StatusPitchesSeen
	case "total_hits":
		return &s.TotalHits, StatusTotalHits
	case "total_pitches":
		return &s.TotalPitches, StatusTotalPitches
	case "home_drive_count":
		return &s.HomeDriveCount, StatusHomeDriveCount
	case "away_drive_count":
		return &s.AwayDriveCount, StatusAwayDriveCount
	case "home_play_count":
		return &s.HomePlayCount, StatusHomePlayCount
	case "away_play_count":
		return &s.AwayPlayCount, StatusAwayPlayCount
	case "batting_team":
		return &s.BattingTeam, StatusBattingTeam
	case "period_of_leader":
		return &s.PeriodOfLeader, StatusPeriodOfLeader
	}
	return nil, 0
}
