package feed

// oddsChange decodes
//
//	<odds_change product event_id timestamp [request_id] [odds_change_reason]>
//	  <sport_event_status .../>
//	  <odds [betting_status] [betstop_reason]>
//	    <market id [specifiers] [extended_specifiers] [status] [favourite]>
//	      <outcome id [odds] [probabilities] [active]/>
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
			d.sportEventStatus(m.EventStatus)
		case "odds":
			if m.Markets == nil {
				m.Markets = make([]OddsMarket, 0, len(body)/512+2)
			}
			outcomes = d.odds(m, outcomes)
		default:
			d.skip()
		}
	}
	if len(m.Markets) == 0 {
		m.Markets = nil
	}
	shareOutcomes(m.Markets, outcomes, func(mk *OddsMarket) *[]OddsOutcome { return &mk.Outcomes })
}

func (d *decoder) odds(m *OddsChange, outcomes []OddsOutcome) []OddsOutcome {
	for d.attr() {
		switch d.an {
		case "betting_status":
			m.BettingStatus = d.int()
		case "betstop_reason":
			m.BetstopReason = d.int()
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
			}
		})
		mk.ID, mk.Specifiers, mk.ExtendedSpecifiers = ref.ID, ref.Specifiers, ref.ExtendedSpecifiers
		outcomes, mk.Outcomes = readOutcomes(d, outcomes, d.oddsOutcome)
		m.Markets = append(m.Markets, mk)
	}
	return outcomes
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
			o.Odds = d.float()
		case "probabilities":
			o.Probability = d.float()
		case "active":
			o.Inactive = !d.bool()
		}
	}
	d.need(seen, "id")
	return o
}

func (d *decoder) sportEventStatus(st *SportEventStatus) {
	for d.attr() {
		switch d.an {
		case "status":
			st.Status = d.int()
		case "reporting":
			st.Reporting = d.int()
		case "match_status":
			st.MatchStatus = d.int()
		case "home_score":
			st.HomeScore = d.float()
		case "away_score":
			st.AwayScore = d.float()
		}
	}
	if !d.open() {
		return
	}
	for d.child() {
		switch d.elem {
		case "clock":
			for d.attr() {
				switch d.an {
				case "match_time":
					st.Clock.MatchTime = d.av
				case "stoppage_time":
					st.Clock.StoppageTime = d.av
				case "remaining_time":
					st.Clock.RemainingTime = d.av
				case "stopped":
					st.Clock.Stopped = d.bool()
				}
			}
			d.skip()
		case "period_scores":
			if !d.open() {
				continue
			}
			for d.child() {
				if d.elem != "period_score" {
					d.skip()
					continue
				}
				var ps PeriodScore
				for d.attr() {
					switch d.an {
					case "number":
						ps.Number = d.int()
					case "match_status_code":
						ps.MatchStatusCode = d.int()
					case "home_score":
						ps.HomeScore = d.float()
					case "away_score":
						ps.AwayScore = d.float()
					}
				}
				st.PeriodScores = append(st.PeriodScores, ps)
				d.skip()
			}
		default:
			d.skip()
		}
	}
}
