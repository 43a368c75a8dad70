package feed

// betStop decodes <bet_stop product event_id timestamp [request_id] [groups] [market_status]/>.
// A bet stop without groups is read, and flagged MissingGroups.
func (d *decoder) betStop(body []byte, m *BetStop) {
	m.MarketStatus = MarketSuspended
	groups := false
	open := d.root(body, MessageBetStop, &m.Header, func() {
		switch d.an {
		case "groups":
			m.Groups, groups = d.av, true
		case "market_status":
			m.MarketStatus = d.marketStatus()
		}
	})
	m.SchemaViolations |= lacking(groups, MissingGroups)
	d.leaf(open)
}

// betSettlement decodes
//
//	<bet_settlement product event_id timestamp [request_id] certainty>
//	  <outcomes>
//	    <market id [specifiers] [extended_specifiers] [name] [void_reason] [result]>
//	      <outcome id result [void_factor] [dead_heat_factor] [dead_heat_factor_place]
//	               [each_way_factor] [each_way_result]/>
//
// A settlement without certainty is read, and flagged MissingCertainty.
func (d *decoder) betSettlement(body []byte, m *BetSettlement) {
	certainty := false
	open := d.root(body, MessageBetSettlement, &m.Header, func() {
		if d.an == "certainty" {
			m.Certainty, certainty = d.int(), true
		}
	})
	m.SchemaViolations |= lacking(certainty, MissingCertainty)
	if !open {
		return
	}
	var outcomes []SettledOutcome
	for d.child() {
		if d.elem != "outcomes" || !d.open() {
			d.skip()
			continue
		}
		for d.child() {
			if d.elem != "market" {
				d.skip()
				continue
			}
			var mk SettledMarket
			ref := d.marketRef(func() {
				if d.an == "result" {
					mk.Result = d.av
				}
			})
			mk.ID, mk.Specifiers, mk.ExtendedSpecifiers, mk.Name = ref.ID, ref.Specifiers, ref.ExtendedSpecifiers, ref.Name
			mk.VoidReason, mk.HasVoidReason = ref.VoidReason, ref.HasVoidReason
			outcomes, mk.Outcomes = readOutcomes(d, outcomes, d.settledOutcome, nil)
			m.Markets = append(m.Markets, mk)
		}
	}
	shareOutcomes(m.Markets, outcomes, func(mk *SettledMarket) *[]SettledOutcome { return &mk.Outcomes })
}

func (d *decoder) settledOutcome() SettledOutcome {
	const sawID, sawResult = 1, 2
	o := SettledOutcome{DeadHeatFactor: 1} // no dead heat unless the attribute says so
	var seen uint8
	for d.attr() {
		switch d.an {
		case "id":
			o.ID = d.av
			seen |= sawID
		case "result":
			switch trimSpace(d.av) {
			case "1":
				o.Result = ResultWon
			case "0":
				o.Result = ResultLost
			case "-1":
				o.Result = ResultUndecided
			default:
				d.badValue("1, 0 or -1")
			}
			seen |= sawResult
		case "void_factor":
			o.VoidFactor = d.float()
		case "dead_heat_factor":
			o.DeadHeatFactor = d.float()
		case "dead_heat_factor_place":
			o.DeadHeatFactorPlace, o.HasDeadHeatFactorPlace = d.float(), true
		case "each_way_factor":
			o.EachWayFactor, o.HasEachWayFactor = d.float(), true
		case "each_way_result":
			o.EachWayResult = d.av
		}
	}
	d.need(seen&sawID != 0, "id")
	d.need(seen&sawResult != 0, "result")
	return o
}

// marketRef reads the attributes of a <market> that names a line; extra, if not nil,
// reads any other attribute (it looks at d.an and d.av).
func (d *decoder) marketRef(extra func()) MarketRef {
	var ref MarketRef
	seen := false
	for d.attr() {
		switch d.an {
		case "id":
			ref.ID = d.int()
			seen = true
		case "specifiers":
			ref.Specifiers = Specifiers(d.av)
		case "extended_specifiers":
			ref.ExtendedSpecifiers = Specifiers(d.av)
		case "name":
			ref.Name = d.av
		case "void_reason":
			ref.VoidReason, ref.HasVoidReason = d.int(), true
		default:
			if extra != nil {
				extra()
			}
		}
	}
	d.need(seen, "id")
	return ref
}

// rollbackBetSettlement decodes <rollback_bet_settlement product event_id timestamp
// [request_id]> with <market id [specifiers] [extended_specifiers] [name]> children, each
// with <outcome id/> children or none.
func (d *decoder) rollbackBetSettlement(body []byte, m *RollbackBetSettlement) {
	d.marketRefs(body, MessageRollbackBetSettlement, &m.Header, &m.Markets, nil)
}

// betCancel decodes <bet_cancel product event_id timestamp [request_id] [start_time]
// [end_time] [superceded_by]> with <market id [specifiers] [extended_specifiers] [name]
// [void_reason]> children, each with <outcome id/> children or none.
func (d *decoder) betCancel(body []byte, m *BetCancel) {
	d.marketRefs(body, MessageBetCancel, &m.Header, &m.Markets, func() {
		switch d.an {
		case "start_time":
			m.StartTime = d.millis()
		case "end_time":
			m.EndTime = d.millis()
		case "superceded_by":
			m.SupercededBy = d.urn()
		}
	})
}

// rollbackBetCancel decodes <rollback_bet_cancel product event_id timestamp [request_id]
// [start_time] [end_time]> with <market id [specifiers] [extended_specifiers] [name]>
// children, each with <outcome id/> children or none.
func (d *decoder) rollbackBetCancel(body []byte, m *RollbackBetCancel) {
	d.marketRefs(body, MessageRollbackBetCancel, &m.Header, &m.Markets, func() {
		switch d.an {
		case "start_time":
			m.StartTime = d.millis()
		case "end_time":
			m.EndTime = d.millis()
		}
	})
}

// marketRefs decodes the messages made of a header, a few attributes (read by extra) and a
// list of <market> lines: bet_cancel, rollback_bet_cancel and rollback_bet_settlement.
func (d *decoder) marketRefs(body []byte, t MessageType, h *Header, markets *[]MarketRef, extra func()) {
	if !d.root(body, t, h, extra) {
		return
	}
	// All outcomes of the message share one backing array (see readOutcomes); most
	// messages list none, and then nothing is allocated for them.
	var outcomes []OutcomeRef
	for d.child() {
		if d.elem != "market" {
			d.skip()
			continue
		}
		mk := d.marketRef(nil)
		outcomes, mk.Outcomes = readOutcomes(d, outcomes, d.outcomeRef, nil)
		*markets = append(*markets, mk)
	}
	shareOutcomes(*markets, outcomes, func(mk *MarketRef) *[]OutcomeRef { return &mk.Outcomes })
}

// outcomeRef reads the attributes of an <outcome id/> that names an outcome of a line.
func (d *decoder) outcomeRef() OutcomeRef {
	var o OutcomeRef
	seen := false
	for d.attr() {
		if d.an == "id" {
			o.ID, seen = d.av, true
		}
	}
	d.need(seen, "id")
	return o
}

// fixtureChange decodes <fixture_change product event_id timestamp [request_id]
// [change_type] start_time [next_live_time]/>. One without start_time is read, and flagged
// MissingStartTime.
func (d *decoder) fixtureChange(body []byte, m *FixtureChange) {
	start := false
	open := d.root(body, MessageFixtureChange, &m.Header, func() {
		switch d.an {
		case "change_type":
			m.ChangeType = d.int()
		case "start_time":
			m.StartTime, start = d.millis(), true
		case "next_live_time":
			m.NextLiveTime = d.millis()
		}
	})
	m.SchemaViolations |= lacking(start, MissingStartTime)
	d.leaf(open)
}

// alive decodes <alive product timestamp subscribed/>.
func (d *decoder) alive(body []byte, m *Alive) {
	subscribed := false
	open := d.root(body, MessageAlive, &m.Header, func() {
		if d.an == "subscribed" {
			m.Subscribed = d.bool()
			subscribed = true
		}
	})
	d.need(subscribed, "subscribed")
	d.leaf(open)
}

// snapshotComplete decodes <snapshot_complete product request_id timestamp/>.
func (d *decoder) snapshotComplete(body []byte, m *SnapshotComplete) {
	d.leaf(d.root(body, MessageSnapshotComplete, &m.Header, nil))
}
