package feed

// oddsChange decodes
//
//	<odds_change product event_id timestamp [request_id] [odds_change_reason]>
//	  <sport_event_status .../>
//	  <odds_generation_properties [expected_totals] [expected_supremacy]/>
//	  <odds [betting_status] [betstop_reason]>
//	    <market id [specifiers] [extended_specifiers] [status] [favourite] [cashout_status]>
//	      <market_metadata [next_betstop] [start_time] [end_time] [aams_id]/>
//	      <outcome id [odds] [probabilities] [active] [team] [win_probabilities]
//	               [lose_probabilities] [half_win_probabilities] [half_lose_probabilities]
//	               [refund_probabilities]/>
func (d *decoder) oddsChange(body []byte, m *OddsChange) {
	if !d.root(body, MessageOddsChange, &m.Header, func() {
		if d.an == "odds_change_reason" {
			m.ChangeReason = d.int()
		}
	}) {
		return
	}
	// All outcomes of the message share one backing array (see readOutcomes).
	outcomes := make([]OddsOutcome, 0, len(body)/64+4)
	for d.child() {
		switch d.elem {
		case "sport_event_status":
			if m.EventStatus == nil {
				m.EventStatus = new(SportEventStatus)
			}
			d.sportEventStatus(m.EventStatus, &m.SchemaViolations)
		case "odds_generation_properties":
			if m.OddsGeneration == nil {
				m.OddsGeneration = new(OddsGeneration)
			}
			d.oddsGeneration(m.OddsGeneration)
		case "odds":
			if m.Markets == nil {
				m.Markets = make([]OddsMarket, 0, len(body)/512+2)
			}
			outcomes = d.odds(&m.BettingStatus, &m.BetstopReason, &m.Markets, outcomes)
		default:
			d.skip()
		}
	}
	d.finishMarkets(&m.Markets, outcomes)
}

// finishMarkets ends the reading of an odds change's or a cashout's market lines: none is
// nil, as encoding/xml leaves it, and once the outcomes have stopped moving every line is
// pointed at its own (see readOutcomes).
func (d *decoder) finishMarkets(markets *[]OddsMarket, outcomes []OddsOutcome) {
	if len(*markets) == 0 {
		*markets = nil
	}
	d.shareAdditional(outcomes)
	shareOutcomes(*markets, outcomes, func(mk *OddsMarket) *[]OddsOutcome { return &mk.Outcomes })
}

// odds reads an odds element (of an odds_change or a cashout): its attributes into
// bettingStatus and betstopReason, its market lines onto markets, their outcomes onto
// outcomes (see readOutcomes), which it returns.
func (d *decoder) odds(bettingStatus, betstopReason *int, markets *[]OddsMarket, outcomes []OddsOutcome) []OddsOutcome {
	for d.attr() {
		switch d.an {
		case "betting_status":
			*bettingStatus = d.int()
		case "betstop_reason":
			*betstopReason = d.int()
		}
	}
	if !d.open() {
		return outcomes
	}
	for d.child() {
		if d.elem != "market" {
			d.skip()
			continue
		}
		var mk OddsMarket // its zero Status is MarketActive, the feed's default
		ref := d.marketRef(func() {
			switch d.an {
			case "status":
				mk.Status = d.marketStatus()
			case "favourite":
				mk.Favourite = d.bool()
			case "cashout_status":
				mk.CashoutStatus = d.cashoutStatus()
			}
		})
		mk.ID, mk.Specifiers, mk.ExtendedSpecifiers = ref.ID, ref.Specifiers, ref.ExtendedSpecifiers
		outcomes, mk.Outcomes = readOutcomes(d, outcomes, d.oddsOutcome, func() {
			if d.elem == "market_metadata" {
				d.marketMetadata(&mk.Metadata)
			}
		})
		*markets = append(*markets, mk)
	}
	return outcomes
}

func (d *decoder) marketMetadata(md *MarketMetadata) {
	for d.attr() {
		switch d.an {
		case "next_betstop":
			md.NextBetstop = d.millis()
		case "start_time":
			md.StartTime = d.millis()
		case "end_time":
			md.EndTime = d.millis()
		case "aams_id":
			md.AAMSID, md.HasAAMSID = d.int64(), true
		}
	}
}

func (d *decoder) oddsGeneration(g *OddsGeneration) {
	for d.attr() {
		switch d.an {
		case "expected_totals":
			g.ExpectedTotals, g.HasExpectedTotals = d.float(), true
		case "expected_supremacy":
			g.ExpectedSupremacy, g.HasExpectedSupremacy = d.float(), true
		}
	}
	d.skip()
}

func (d *decoder) oddsOutcome() OddsOutcome {
	var o OddsOutcome // active unless the attribute says otherwise
	seen := false
	for d.attr() {
		switch d.an {
		case "id":
			o.ID = d.av
			seen = true
		case "odds":
			o.Odds, o.HasOdds = d.float(), true
		case "probabilities":
			o.Probability, o.HasProbability = d.float(), true
		case "active":
			o.Inactive = !d.bool()
		case "team":
			o.Team = d.int8("a team, 1 or 2")
		case "win_probabilities":
			a := d.additional()
			a.Win, a.HasWin = d.float(), true
		case "lose_probabilities":
			a := d.additional()
			a.Lose, a.HasLose = d.float(), true
		case "half_win_probabilities":
			a := d.additional()
			a.HalfWin, a.HasHalfWin = d.float(), true
		case "half_lose_probabilities":
			a := d.additional()
			a.HalfLose, a.HasHalfLose = d.float(), true
		case "refund_probabilities":
			a := d.additional()
			a.Refund, a.HasRefund = d.float(), true
		}
	}
	d.need(seen, "id")
	d.outcomes++
	return o
}

// additional returns the additional probabilities of the outcome being read, adding them
// the first time. They go into one array for the whole message, whose entries are
// pointed to by the outcomes once it has stopped moving (see shareAdditional).
func (d *decoder) additional() *AdditionalProbabilities {
	if n := len(d.extra.owners); n == 0 || d.extra.owners[n-1] != d.outcomes {
		d.extra.owners = append(d.extra.owners, d.outcomes)
		d.extra.probs = append(d.extra.probs, AdditionalProbabilities{})
	}
	return &d.extra.probs[len(d.extra.probs)-1]
}

// shareAdditional points each outcome that has additional probabilities at its entry.
func (d *decoder) shareAdditional(outcomes []OddsOutcome) {
	for i, owner := range d.extra.owners {
		outcomes[owner].Additional = &d.extra.probs[i]
	}
}

// sportEventStatus reads a sport_event_status into st. The required attributes it lacks
// (status, match_status, and those of period scores, results and statistics counts) are
// added to lacks.
func (d *decoder) sportEventStatus(st *SportEventStatus, lacks *SchemaViolation) {
	const sawStatus, sawMatchStatus = 1, 2
	var seen uint8
	for d.attr() {
		switch d.an {
		case "status":
			st.Status = d.int()
			seen |= sawStatus
		case "match_status":
			st.MatchStatus = d.int()
			seen |= sawMatchStatus
		case "home_score":
			st.HomeScore = d.float()
			st.Fields |= StatusHomeScore
		case "away_score":
			st.AwayScore = d.float()
			st.Fields |= StatusAwayScore
		case "expedite_mode":
			st.ExpediteMode = d.bool()
			st.Fields |= StatusExpediteMode
		case "tiebreak":
			st.Tiebreak = d.bool()
			st.Fields |= StatusTiebreak
		case "bases":
			st.Bases = d.av
			st.Fields |= StatusBases
		case "pitcher":
			st.Pitcher = d.av
			st.Fields |= StatusPitcher
		case "batter":
			st.Batter = d.av
			st.Fields |= StatusBatter
		default:
			if p, f := st.intField(d.an); p != nil {
				*p = d.int()
				st.Fields |= f
			}
		}
	}
	*lacks |= lacking(seen&sawStatus != 0, MissingStatus) | lacking(seen&sawMatchStatus != 0, MissingMatchStatus)
	if !d.open() {
		return
	}
	for d.child() {
		switch d.elem {
		case "clock":
			d.clock(st)
		case "period_scores":
			if !d.open() {
				continue
			}
			for d.child() {
				if d.elem != "period_score" {
					d.skip()
					continue
				}
				st.PeriodScores = append(st.PeriodScores, d.periodScore(lacks))
				d.skip()
			}
		case "results":
			if !d.open() {
				continue
			}
			for d.child() {
				if d.elem == "result" {
					st.Results = append(st.Results, d.eventResult(lacks))
				}
				d.skip()
			}
		case "statistics":
			if !d.open() {
				continue
			}
			for d.child() {
				switch d.elem {
				case "yellow_cards":
					st.Fields |= d.teamCounts(&st.Statistics.YellowCards, StatusYellowCards, lacks)
				case "red_cards":
					st.Fields |= d.teamCounts(&st.Statistics.RedCards, StatusRedCards, lacks)
				case "yellow_red_cards":
					st.Fields |= d.teamCounts(&st.Statistics.YellowRedCards, StatusYellowRedCards, lacks)
				case "corners":
					st.Fields |= d.teamCounts(&st.Statistics.Corners, StatusCorners, lacks)
				case "green_cards":
					st.Fields |= d.teamCounts(&st.Statistics.GreenCards, StatusGreenCards, lacks)
				case "tries":
					st.Fields |= d.teamCounts(&st.Statistics.Tries, StatusTries, lacks)
				}
				d.skip()
			}
		default:
			d.skip()
		}
	}
}

func (d *decoder) clock(st *SportEventStatus) {
	c := &st.Clock
	for d.attr() {
		switch d.an {
		case "match_time":
			c.MatchTime = d.av
		case "stoppage_time":
			c.StoppageTime = d.av
		case "stoppage_time_announced":
			c.StoppageTimeAnnounced = d.av
		case "remaining_time":
			c.RemainingTime = d.av
		case "remaining_time_in_period":
			c.RemainingTimeInPeriod = d.av
		case "stopped":
			c.Stopped = d.bool()
			st.Fields |= StatusClockStopped
		}
	}
	d.skip()
}

// periodScore reads a period_scores/period_score element, whose four attributes the schema
// requires: those it lacks are added to lacks.
func (d *decoder) periodScore(lacks *SchemaViolation) PeriodScore {
	const sawNumber, sawCode, sawHome, sawAway = 1, 2, 4, 8
	var ps PeriodScore
	var seen uint8
	for d.attr() {
		switch d.an {
		case "number":
			ps.Number = d.int()
			seen |= sawNumber
		case "match_status_code":
			ps.MatchStatusCode = d.int()
			seen |= sawCode
		case "home_score":
			ps.HomeScore = d.float()
			seen |= sawHome
		case "away_score":
			ps.AwayScore = d.float()
			seen |= sawAway
		}
	}
	*lacks |= lacking(seen&sawNumber != 0, MissingPeriodNumber) |
		lacking(seen&sawCode != 0, MissingPeriodMatchStatusCode) |
		lacking(seen&(sawHome|sawAway) == sawHome|sawAway, MissingPeriodScore)
	return ps
}

// eventResult reads a results/result element, whose three attributes the schema requires:
// those it lacks are added to lacks.
func (d *decoder) eventResult(lacks *SchemaViolation) EventResult {
	const sawCode, sawHome, sawAway = 1, 2, 4
	var r EventResult
	var seen uint8
	for d.attr() {
		switch d.an {
		case "match_status_code":
			r.MatchStatusCode = d.int()
			seen |= sawCode
		case "home_score":
			r.HomeScore = d.float()
			seen |= sawHome
		case "away_score":
			r.AwayScore = d.float()
			seen |= sawAway
		}
	}
	*lacks |= lacking(seen&sawCode != 0, MissingResultMatchStatusCode) |
		lacking(seen&(sawHome|sawAway) == sawHome|sawAway, MissingResultScore)
	return r
}

// teamCounts reads a statistics count, whose home and away the schema requires. It
// returns f when both were sent; a count that lacks one is added to lacks and gets no
// bit, so that a count left out does not read as zero.
func (d *decoder) teamCounts(tc *TeamCounts, f StatusField, lacks *SchemaViolation) StatusField {
	const sawHome, sawAway = 1, 2
	var seen uint8
	for d.attr() {
		switch d.an {
		case "home":
			tc.Home = d.int()
			seen |= sawHome
		case "away":
			tc.Away = d.int()
			seen |= sawAway
		}
	}
	if seen != sawHome|sawAway {
		*lacks |= MissingStatisticsCount
		return 0
	}
	return f
}

// lacking returns v unless sent.
func lacking(sent bool, v SchemaViolation) SchemaViolation {
	if sent {
		return 0
	}
	return v
}
