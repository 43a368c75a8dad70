package feed

// cashout decodes
//
//	<cashout product event_id timestamp [request_id]>
//	  <sport_event_status .../>
//	  <odds [betting_status] [betstop_reason]>
//	    <market ...> as in odds_change
//
// with the odds change's readers: the schema gives both the same types.
func (d *decoder) cashout(body []byte, m *Cashout) {
	if !d.root(body, MessageCashout, &m.Header, nil) {
		return
	}
	outcomes := make([]OddsOutcome, 0, len(body)/64+4)
	for d.child() {
		switch d.elem {
		case "sport_event_status":
			if m.EventStatus == nil {
				m.EventStatus = new(SportEventStatus)
			}
			d.sportEventStatus(m.EventStatus, &m.SchemaViolations)
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
