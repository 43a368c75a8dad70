package feedtest

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Marshal encodes m as the feed would send it. feed.Decode of the result gives back m for
// a message as Decode makes them: nil slices where there is nothing, times in UTC with
// millisecond precision, finite numbers, no control characters in strings (XML cannot
// carry them), ReceivedAt zero. The simulator publishes with it; tests build bodies with it.
func Marshal(m feed.Message) []byte {
	return AppendXML(make([]byte, 0, 512), m)
}

// AppendXML appends the XML encoding of m to b.
//
// A required attribute is written whatever its value, unless the header's
// SchemaViolations names it and its value is the zero: then it is left out, as the feed
// would have, so that a test can send a message that lacks it. (MissingStatisticsCount is
// not written: a statistics count without its bit is left out whole.)
func AppendXML(b []byte, m feed.Message) []byte {
	w := xmlWriter{b: b}
	switch m := m.(type) {
	case *feed.OddsChange:
		w.open("odds_change", &m.Header)
		w.intAttr("odds_change_reason", m.ChangeReason)
		w.b = append(w.b, '>')
		if st := m.EventStatus; st != nil {
			w.eventStatus(st, m.SchemaViolations)
		}
		if g := m.OddsGeneration; g != nil {
			w.b = append(w.b, "<odds_generation_properties"...)
			if g.HasExpectedTotals {
				w.floatAttrAlways("expected_totals", g.ExpectedTotals)
			}
			if g.HasExpectedSupremacy {
				w.floatAttrAlways("expected_supremacy", g.ExpectedSupremacy)
			}
			w.b = append(w.b, "/>"...)
		}
		w.odds(m.Markets, m.BettingStatus, m.BetstopReason)
		w.b = append(w.b, "</odds_change>"...)
	case *feed.BetStop:
		w.open("bet_stop", &m.Header)
		if !(m.SchemaViolations.Has(feed.MissingGroups) && m.Groups == "") {
			w.strAttrAlways("groups", m.Groups)
		}
		w.intAttrAlways("market_status", m.MarketStatus.Code())
		w.b = append(w.b, "/>"...)
	case *feed.BetSettlement:
		w.open("bet_settlement", &m.Header)
		if !(m.SchemaViolations.Has(feed.MissingCertainty) && m.Certainty == 0) {
			w.intAttrAlways("certainty", m.Certainty)
		}
		w.b = append(w.b, "><outcomes>"...)
		for _, mk := range m.Markets {
			w.marketRef(feed.MarketRef{ID: mk.ID, Specifiers: mk.Specifiers, ExtendedSpecifiers: mk.ExtendedSpecifiers,
				Name: mk.Name, VoidReason: mk.VoidReason, HasVoidReason: mk.HasVoidReason})
			w.strAttr("result", mk.Result)
			w.b = append(w.b, '>')
			for _, o := range mk.Outcomes {
				w.b = append(w.b, "<outcome"...)
				w.strAttrAlways("id", o.ID)
				w.intAttrAlways("result", int(o.Result))
				w.floatAttr("void_factor", o.VoidFactor)
				if o.DeadHeatFactor != 1 { // 1, no dead heat, is what an absent attribute means
					w.floatAttrAlways("dead_heat_factor", o.DeadHeatFactor)
				}
				w.floatIf("dead_heat_factor_place", o.DeadHeatFactorPlace, o.HasDeadHeatFactorPlace)
				w.floatIf("each_way_factor", o.EachWayFactor, o.HasEachWayFactor)
				w.strAttr("each_way_result", o.EachWayResult)
				w.b = append(w.b, "/>"...)
			}
			w.b = append(w.b, "</market>"...)
		}
		w.b = append(w.b, "</outcomes></bet_settlement>"...)
	case *feed.RollbackBetSettlement:
		w.open("rollback_bet_settlement", &m.Header)
		w.marketRefs("rollback_bet_settlement", m.Markets)
	case *feed.BetCancel:
		w.open("bet_cancel", &m.Header)
		w.timeAttr("start_time", m.StartTime)
		w.timeAttr("end_time", m.EndTime)
		w.strAttr("superceded_by", m.SupercededBy.String())
		w.marketRefs("bet_cancel", m.Markets)
	case *feed.RollbackBetCancel:
		w.open("rollback_bet_cancel", &m.Header)
		w.timeAttr("start_time", m.StartTime)
		w.timeAttr("end_time", m.EndTime)
		w.marketRefs("rollback_bet_cancel", m.Markets)
	case *feed.FixtureChange:
		w.open("fixture_change", &m.Header)
		w.intAttr("change_type", m.ChangeType)
		if !(m.SchemaViolations.Has(feed.MissingStartTime) && m.StartTime.IsZero()) {
			w.int64Attr("start_time", m.StartTime.UnixMilli())
		}
		w.timeAttr("next_live_time", m.NextLiveTime)
		w.b = append(w.b, "/>"...)
	case *feed.Cashout:
		w.open("cashout", &m.Header)
		w.b = append(w.b, '>')
		if st := m.EventStatus; st != nil {
			w.eventStatus(st, m.SchemaViolations)
		}
		w.odds(m.Markets, m.BettingStatus, m.BetstopReason)
		w.b = append(w.b, "</cashout>"...)
	case *feed.Alive:
		w.open("alive", &m.Header)
		w.boolAttr("subscribed", m.Subscribed)
		w.b = append(w.b, "/>"...)
	case *feed.SnapshotComplete:
		w.open("snapshot_complete", &m.Header)
		w.b = append(w.b, "/>"...)
	default:
		panic(fmt.Sprintf("feedtest: cannot encode %T", m))
	}
	return w.b
}

type xmlWriter struct{ b []byte }

// odds writes the odds element of an odds change or a cashout, if it has anything.
func (w *xmlWriter) odds(markets []feed.OddsMarket, bettingStatus, betstopReason int) {
	if markets != nil || bettingStatus != 0 || betstopReason != 0 {
		w.b = append(w.b, "<odds"...)
		w.intAttr("betting_status", bettingStatus)
		w.intAttr("betstop_reason", betstopReason)
		w.b = append(w.b, '>')
		for _, mk := range markets {
			w.b = append(w.b, "<market"...)
			w.intAttrAlways("id", mk.ID)
			w.strAttr("specifiers", string(mk.Specifiers))
			w.strAttr("extended_specifiers", string(mk.ExtendedSpecifiers))
			w.intAttrAlways("status", mk.Status.Code())
			if mk.Favourite {
				w.strAttr("favourite", "1")
			}
			w.intAttr("cashout_status", int(mk.CashoutStatus))
			w.b = append(w.b, '>')
			if md := mk.Metadata; md != (feed.MarketMetadata{}) {
				w.b = append(w.b, "<market_metadata"...)
				w.timeAttr("next_betstop", md.NextBetstop)
				w.timeAttr("start_time", md.StartTime)
				w.timeAttr("end_time", md.EndTime)
				if md.HasAAMSID {
					w.int64Attr("aams_id", md.AAMSID)
				}
				w.b = append(w.b, "/>"...)
			}
			for _, o := range mk.Outcomes {
				w.oddsOutcome(o)
			}
			w.b = append(w.b, "</market>"...)
		}
		w.b = append(w.b, "</odds>"...)
	}
}

func (w *xmlWriter) open(name string, h *feed.Header) {
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	w.intAttrAlways("product", h.Producer)
	w.strAttr("event_id", h.Event.String())
	w.b = append(w.b, ` timestamp="`...)
	w.b = strconv.AppendInt(w.b, h.Timestamp.UnixMilli(), 10)
	w.b = append(w.b, '"')
	if h.RequestID != 0 {
		w.b = append(w.b, ` request_id="`...)
		w.b = strconv.AppendInt(w.b, h.RequestID, 10)
		w.b = append(w.b, '"')
	}
}

func (w *xmlWriter) marketRef(r feed.MarketRef) {
	w.b = append(w.b, "<market"...)
	w.intAttrAlways("id", r.ID)
	w.strAttr("specifiers", string(r.Specifiers))
	w.strAttr("extended_specifiers", string(r.ExtendedSpecifiers))
	w.strAttr("name", r.Name)
	if r.HasVoidReason {
		w.intAttrAlways("void_reason", r.VoidReason)
	}
}

func (w *xmlWriter) marketRefs(root string, refs []feed.MarketRef) {
	w.b = append(w.b, '>')
	for _, r := range refs {
		w.marketRef(r)
		if len(r.Outcomes) == 0 {
			w.b = append(w.b, "/>"...)
			continue
		}
		w.b = append(w.b, '>')
		for _, o := range r.Outcomes {
			w.b = append(w.b, "<outcome"...)
			w.strAttrAlways("id", o.ID)
			w.b = append(w.b, "/>"...)
		}
		w.b = append(w.b, "</market>"...)
	}
	w.b = append(w.b, "</"...)
	w.b = append(w.b, root...)
	w.b = append(w.b, '>')
}

func (w *xmlWriter) name(n string) {
	w.b = append(w.b, ' ')
	w.b = append(w.b, n...)
	w.b = append(w.b, `="`...)
}

func (w *xmlWriter) intAttr(n string, v int) {
	if v != 0 {
		w.intAttrAlways(n, v)
	}
}

func (w *xmlWriter) intAttrAlways(n string, v int) {
	w.name(n)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
	w.b = append(w.b, '"')
}

func (w *xmlWriter) int64Attr(n string, v int64) {
	w.name(n)
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, '"')
}

// floatIf writes a float attribute when the value was sent (has).
func (w *xmlWriter) floatIf(n string, v float64, has bool) {
	if has {
		w.floatAttrAlways(n, v)
	}
}

func (w *xmlWriter) floatAttr(n string, v float64) {
	if v != 0 {
		w.floatAttrAlways(n, v)
	}
}

// floatAttrAlways writes v as an xs:double: the infinities as INF and -INF (strconv
// writes +Inf and -Inf, which the schema has not), NaN as NaN.
func (w *xmlWriter) floatAttrAlways(n string, v float64) {
	w.name(n)
	switch {
	case math.IsInf(v, 1):
		w.b = append(w.b, "INF"...)
	case math.IsInf(v, -1):
		w.b = append(w.b, "-INF"...)
	default:
		w.b = strconv.AppendFloat(w.b, v, 'g', -1, 64)
	}
	w.b = append(w.b, '"')
}

func (w *xmlWriter) boolAttr(n string, v bool) {
	w.name(n)
	if v {
		w.b = append(w.b, '1')
	} else {
		w.b = append(w.b, '0')
	}
	w.b = append(w.b, '"')
}

func (w *xmlWriter) timeAttr(n string, t time.Time) {
	if !t.IsZero() {
		w.name(n)
		w.b = strconv.AppendInt(w.b, t.UnixMilli(), 10)
		w.b = append(w.b, '"')
	}
}

func (w *xmlWriter) strAttr(n, v string) {
	if v != "" {
		w.strAttrAlways(n, v)
	}
}

// strAttrAlways writes a string attribute, escaping what XML requires and the characters
// attribute-value handling would otherwise change.
func (w *xmlWriter) strAttrAlways(n, v string) {
	w.name(n)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '&':
			w.b = append(w.b, "&amp;"...)
		case '<':
			w.b = append(w.b, "&lt;"...)
		case '>':
			w.b = append(w.b, "&gt;"...)
		case '"':
			w.b = append(w.b, "&quot;"...)
		case '\r':
			w.b = append(w.b, "&#13;"...)
		default:
			w.b = append(w.b, c)
		}
	}
	w.b = append(w.b, '"')
}
