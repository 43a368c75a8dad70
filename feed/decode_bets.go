package feed

// betStop decodes <bet_stop product event_id timestamp [request_id] [groups] [market_status]/>.
func (d *decoder) betStop(body []byte, m *BetStop) {
	if !d.begin(body, MessageBetStop) {
		return
	}
	m.MarketStatus = MarketSuspended
	var seen uint8
	for d.attr() {
		if d.header(&m.Header, &seen) {
			continue
		}
		switch d.an {
		case "groups":
			m.Groups = d.av
		case "market_status":
			m.MarketStatus = MarketStatus(d.int())
		}
	}
	d.needHeader(seen, true)
	d.skip()
}

// betSettlement decodes
//
//	<bet_settlement product event_id timestamp [request_id] [certainty]>
//	  <outcomes>
//	    <market id [specifiers] [extended_specifiers] [void_reason]>
//	      <outcome id result [void_factor] [dead_heat_factor]/>
func (d *decoder) betSettlement(body []byte, m *BetSettlement) {
	if !d.begin(body, MessageBetSettlement) {
		return
	}
	var seen uint8
	for d.attr() {
		if !d.header(&m.Header, &seen) && d.an == "certainty" {
			m.Certainty = d.int()
		}
	}
	d.needHeader(seen, true)
	if !d.open() {
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
			var ref MarketRef
			seen := d.marketRefAttrs(&ref)
			mk.ID, mk.Specifiers, mk.ExtendedSpecifiers, mk.VoidReason = ref.ID, ref.Specifiers, ref.ExtendedSpecifiers, ref.VoidReason
			d.need(seen != 0, "id")
			start := len(outcomes)
			if d.open() {
				for d.child() {
					if d.elem != "outcome" {
						d.skip()
						continue
					}
					outcomes = append(outcomes, d.settledOutcome())
					d.skip()
				}
			}
			mk.Outcomes = outcomes[start:] // re-cut below, as in oddsChange
			m.Markets = append(m.Markets, mk)
		}
	}
	off := 0
	for i := range m.Markets {
		n := len(m.Markets[i].Outcomes)
		m.Markets[i].Outcomes = cut(outcomes, off, n)
		off += n
	}
}

func (d *decoder) settledOutcome() SettledOutcome {
	const sawID, sawResult = 1, 2
	var o SettledOutcome
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
		}
	}
	d.need(seen&sawID != 0, "id")
	d.need(seen&sawResult != 0, "result")
	return o
}

// marketRefAttrs reads the attributes of a <market> that names a line; it returns non-zero
// when the required id was present.
func (d *decoder) marketRefAttrs(ref *MarketRef) uint8 {
	var seen uint8
	for d.attr() {
		switch d.an {
		case "id":
			ref.ID = d.int()
			seen |= sawOther
		case "specifiers":
			ref.Specifiers = Specifiers(d.av)
		case "extended_specifiers":
			ref.ExtendedSpecifiers = Specifiers(d.av)
		case "void_reason":
			ref.VoidReason = d.int()
		}
	}
	return seen
}

// marketRefs decodes the messages made of a header, a few attributes (read by extra) and a
// list of <market> lines: bet_cancel, rollback_bet_cancel and rollback_bet_settlement.
func (d *decoder) marketRefs(body []byte, t MessageType, h *Header, markets *[]MarketRef, extra func() bool) {
	if !d.begin(body, t) {
		return
	}
	var seen uint8
	for d.attr() {
		if !d.header(h, &seen) && extra != nil {
			extra()
		}
	}
	d.needHeader(seen, true)
	if !d.open() {
		return
	}
	for d.child() {
		if d.elem != "market" {
			d.skip()
			continue
		}
		var ref MarketRef
		seen := d.marketRefAttrs(&ref)
		d.need(seen != 0, "id")
		*markets = append(*markets, ref)
		d.skip()
	}
}

// fixtureChange decodes <fixture_change product event_id timestamp [request_id]
// [change_type] [start_time] [next_live_time]/>.
func (d *decoder) fixtureChange(body []byte, m *FixtureChange) {
	if !d.begin(body, MessageFixtureChange) {
		return
	}
	var seen uint8
	for d.attr() {
		if d.header(&m.Header, &seen) {
			continue
		}
		switch d.an {
		case "change_type":
			m.ChangeType = d.int()
		case "start_time":
			m.StartTime = d.millis()
		case "next_live_time":
			m.NextLiveTime = d.millis()
		}
	}
	d.needHeader(seen, true)
	d.skip()
}

// alive decodes <alive product timestamp subscribed/>.
func (d *decoder) alive(body []byte, m *Alive) {
	if !d.begin(body, MessageAlive) {
		return
	}
	var seen uint8
	for d.attr() {
		if !d.header(&m.Header, &seen) && d.an == "subscribed" {
			m.Subscribed = d.bool()
			seen |= sawOther
		}
	}
	d.needHeader(seen, false)
	d.need(seen&sawOther != 0, "subscribed")
	d.skip()
}

// snapshotComplete decodes <snapshot_complete product request_id timestamp/>.
func (d *decoder) snapshotComplete(body []byte, m *SnapshotComplete) {
	if !d.begin(body, MessageSnapshotComplete) {
		return
	}
	var seen uint8
	for d.attr() {
		d.header(&m.Header, &seen)
	}
	d.needHeader(seen, false)
	d.need(seen&sawRequestID != 0, "request_id")
	d.skip()
}
