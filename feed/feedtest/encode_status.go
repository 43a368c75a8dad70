package feedtest

import "github.com/feedkit/feedkit/feed"

// oddsOutcome writes an odds_change outcome: each optional attribute that the outcome
// says was sent.
func (w *xmlWriter) oddsOutcome(o feed.OddsOutcome) {
	w.b = append(w.b, "<outcome"...)
	w.strAttrAlways("id", o.ID)
	w.floatIf("odds", o.Odds, o.HasOdds)
	w.floatIf("probabilities", o.Probability, o.HasProbability)
	w.boolAttr("active", !o.Inactive)
	w.intAttr("team", int(o.Team))
	if a := o.Additional; a != nil {
		w.floatIf("win_probabilities", a.Win, a.HasWin)
		w.floatIf("lose_probabilities", a.Lose, a.HasLose)
		w.floatIf("half_win_probabilities", a.HalfWin, a.HasHalfWin)
		w.floatIf("half_lose_probabilities", a.HalfLose, a.HasHalfLose)
		w.floatIf("refund_probabilities", a.Refund, a.HasRefund)
	}
	w.b = append(w.b, "/>"...)
}

// eventStatus writes a sport_event_status with the optional attributes and elements whose
// bits st.Fields sets, and every required attribute but those the message's violations
// name whose value is 0.
func (w *xmlWriter) eventStatus(st *feed.SportEventStatus, lacks feed.SchemaViolation) {
	has := st.Has
	w.b = append(w.b, "<sport_event_status"...)
	w.intRequired("status", st.Status, lacks.Has(feed.MissingStatus))
	w.intRequired("match_status", st.MatchStatus, lacks.Has(feed.MissingMatchStatus))
	for _, a := range []struct {
		name string
		v    *int
		f    feed.StatusField
	}{
		{"reporting", &st.Reporting, feed.StatusReporting},
		{"home_penalty_score", &st.HomePenaltyScore, feed.StatusHomePenaltyScore},
		{"away_penalty_score", &st.AwayPenaltyScore, feed.StatusAwayPenaltyScore},
		{"home_gamescore", &st.HomeGameScore, feed.StatusHomeGameScore},
		{"away_gamescore", &st.AwayGameScore, feed.StatusAwayGameScore},
		{"home_legscore", &st.HomeLegScore, feed.StatusHomeLegScore},
		{"away_legscore", &st.AwayLegScore, feed.StatusAwayLegScore},
		{"current_server", &st.CurrentServer, feed.StatusCurrentServer},
		{"home_suspend", &st.HomeSuspend, feed.StatusHomeSuspend},
		{"away_suspend", &st.AwaySuspend, feed.StatusAwaySuspend},
		{"balls", &st.Balls, feed.StatusBalls},
		{"strikes", &st.Strikes, feed.StatusStrikes},
		{"outs", &st.Outs, feed.StatusOuts},
		{"home_batter", &st.HomeBatter, feed.StatusHomeBatter},
		{"away_batter", &st.AwayBatter, feed.StatusAwayBatter},
		{"possession", &st.Possession, feed.StatusPossession},
		{"position", &st.Position, feed.StatusPosition},
		{"try", &st.Try, feed.StatusTry},
		{"yards", &st.Yards, feed.StatusYards},
		{"throw", &st.Throw, feed.StatusThrow},
		{"visit", &st.Visit, feed.StatusVisit},
		{"remaining_reds", &st.RemainingReds, feed.StatusRemainingReds},
		{"delivery", &st.Delivery, feed.StatusDelivery},
		{"home_remaining_bowls", &st.HomeRemainingBowls, feed.StatusHomeRemainingBowls},
		{"away_remaining_bowls", &st.AwayRemainingBowls, feed.StatusAwayRemainingBowls},
		{"current_end", &st.CurrentEnd, feed.StatusCurrentEnd},
		{"innings", &st.Innings, feed.StatusInnings},
		{"over", &st.Over, feed.StatusOver},
		{"home_penalty_runs", &st.HomePenaltyRuns, feed.StatusHomePenaltyRuns},
		{"away_penalty_runs", &st.AwayPenaltyRuns, feed.StatusAwayPenaltyRuns},
		{"home_dismissals", &st.HomeDismissals, feed.StatusHomeDismissals},
		{"away_dismissals", &st.AwayDismissals, feed.StatusAwayDismissals},
		{"current_ct_team", &st.CurrentCTTeam, feed.StatusCurrentCTTeam},
		{"pitch_count", &st.PitchCount, feed.StatusPitchCount},
		{"pitches_seen", &st.PitchesSeen, feed.StatusPitchesSeen},
		{"total_hits", &st.TotalHits, feed.StatusTotalHits},
		{"total_pitches", &st.TotalPitches, feed.StatusTotalPitches},
		{"home_drive_count", &st.HomeDriveCount, feed.StatusHomeDriveCount},
		{"away_drive_count", &st.AwayDriveCount, feed.StatusAwayDriveCount},
		{"home_play_count", &st.HomePlayCount, feed.StatusHomePlayCount},
		{"away_play_count", &st.AwayPlayCount, feed.StatusAwayPlayCount},
		{"batting_team", &st.BattingTeam, feed.StatusBattingTeam},
		{"period_of_leader", &st.PeriodOfLeader, feed.StatusPeriodOfLeader},
	} {
		if has(a.f) {
			w.intAttrAlways(a.name, *a.v)
		}
	}
	w.floatIf("home_score", st.HomeScore, has(feed.StatusHomeScore))
	w.floatIf("away_score", st.AwayScore, has(feed.StatusAwayScore))
	if has(feed.StatusExpediteMode) {
		w.boolAttr("expedite_mode", st.ExpediteMode)
	}
	if has(feed.StatusTiebreak) {
		w.boolAttr("tiebreak", st.Tiebreak)
	}
	if has(feed.StatusBases) {
		w.strAttrAlways("bases", st.Bases)
	}
	if has(feed.StatusPitcher) {
		w.strAttrAlways("pitcher", st.Pitcher)
	}
	if has(feed.StatusBatter) {
		w.strAttrAlways("batter", st.Batter)
	}
	w.b = append(w.b, '>')

	c := st.Clock
	if c != (feed.EventClock{}) || has(feed.StatusClockStopped) {
		w.b = append(w.b, "<clock"...)
		w.strAttr("match_time", c.MatchTime)
		w.strAttr("stoppage_time", c.StoppageTime)
		w.strAttr("stoppage_time_announced", c.StoppageTimeAnnounced)
		w.strAttr("remaining_time", c.RemainingTime)
		w.strAttr("remaining_time_in_period", c.RemainingTimeInPeriod)
		if has(feed.StatusClockStopped) {
			w.boolAttr("stopped", c.Stopped)
		}
		w.b = append(w.b, "/>"...)
	}
	if len(st.PeriodScores) > 0 {
		w.b = append(w.b, "<period_scores>"...)
		for _, p := range st.PeriodScores {
			w.b = append(w.b, "<period_score"...)
			w.intRequired("number", p.Number, lacks.Has(feed.MissingPeriodNumber))
			w.intRequired("match_status_code", p.MatchStatusCode, lacks.Has(feed.MissingPeriodMatchStatusCode))
			w.floatRequired("home_score", p.HomeScore, lacks.Has(feed.MissingPeriodScore))
			w.floatRequired("away_score", p.AwayScore, lacks.Has(feed.MissingPeriodScore))
			w.b = append(w.b, "/>"...)
		}
		w.b = append(w.b, "</period_scores>"...)
	}
	if len(st.Results) > 0 {
		w.b = append(w.b, "<results>"...)
		for _, r := range st.Results {
			w.b = append(w.b, "<result"...)
			w.intRequired("match_status_code", r.MatchStatusCode, lacks.Has(feed.MissingResultMatchStatusCode))
			w.floatRequired("home_score", r.HomeScore, lacks.Has(feed.MissingResultScore))
			w.floatRequired("away_score", r.AwayScore, lacks.Has(feed.MissingResultScore))
			w.b = append(w.b, "/>"...)
		}
		w.b = append(w.b, "</results>"...)
	}
	const stats = feed.StatusYellowCards | feed.StatusRedCards | feed.StatusYellowRedCards | feed.StatusCorners |
		feed.StatusGreenCards | feed.StatusTries
	if st.Fields&stats != 0 {
		w.b = append(w.b, "<statistics>"...)
		for _, s := range []struct {
			name string
			c    feed.TeamCounts
			f    feed.StatusField
		}{
			{"yellow_cards", st.Statistics.YellowCards, feed.StatusYellowCards},
			{"red_cards", st.Statistics.RedCards, feed.StatusRedCards},
			{"yellow_red_cards", st.Statistics.YellowRedCards, feed.StatusYellowRedCards},
			{"corners", st.Statistics.Corners, feed.StatusCorners},
			{"green_cards", st.Statistics.GreenCards, feed.StatusGreenCards},
			{"tries", st.Statistics.Tries, feed.StatusTries},
		} {
			if has(s.f) {
				w.b = append(w.b, '<')
				w.b = append(w.b, s.name...)
				w.intAttrAlways("home", s.c.Home)
				w.intAttrAlways("away", s.c.Away)
				w.b = append(w.b, "/>"...)
			}
		}
		w.b = append(w.b, "</statistics>"...)
	}
	w.b = append(w.b, "</sport_event_status>"...)
}

// intRequired writes a required attribute, unless the message lacked it (missing) and it
// reads 0.
func (w *xmlWriter) intRequired(n string, v int, missing bool) {
	if !missing || v != 0 {
		w.intAttrAlways(n, v)
	}
}

// floatRequired is intRequired for a number.
func (w *xmlWriter) floatRequired(n string, v float64, missing bool) {
	if !missing || v != 0 {
		w.floatAttrAlways(n, v)
	}
}
