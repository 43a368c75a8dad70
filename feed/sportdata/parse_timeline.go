package sportdata

import "strconv"

// ParseTimeline reads a match's timeline (match_timeline) in lang.
func ParseTimeline(b []byte, lang string) (Timeline, error) {
	return parseTimeline(b, lang, "timeline in "+lang)
}

func parseTimeline(b []byte, lang, doc string) (Timeline, error) {
	p := newParser(b, lang, doc)
	var tl Timeline
	if p.root("match_timeline") != "" {
		p.children(func(child string) {
			switch child {
			case "sport_event":
				tl.Event = p.event(child, nil)
			case "sport_event_status":
				st := p.status()
				tl.Status = &st
			case "sport_event_conditions":
				p.conditions(&tl.Event)
			case "timeline":
				tl.Events = make([]TimelineEvent, 0, p.count("<event "))
				p.each("event", func() {
					tl.Events = append(tl.Events, p.timelineEvent())
				})
			default:
				p.skip()
			}
		})
		p.need("sport_event", tl.Event.ID)
	}
	return tl, p.err
}

func (p *parser) timelineEvent() TimelineEvent {
	var e TimelineEvent
	sawID := false
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				p.failf("<event id=%q>: not an integer", v)
			}
			e.ID, sawID = id, true
		case "type":
			e.Type = v
		case "time":
			e.Time = p.time("event", n, v)
		case "match_time":
			e.MatchTime = p.int("event", n, v)
		case "match_clock":
			e.MatchClock = v
		case "team":
			e.Team = v
		case "period":
			e.Period = v
		case "period_name":
			e.PeriodName = v
		case "home_score":
			e.HomeScore = p.float("event", n, v)
		case "away_score":
			e.AwayScore = p.float("event", n, v)
		}
	}
	if !sawID {
		p.failf("<event> of the timeline without an id")
	}
	p.children(func(child string) {
		switch child {
		case "player", "assist", "goal_scorer":
			if e.Players == nil {
				e.Players = make([]Ref, 0, 2) // a scorer and an assist, most often
			}
			e.Players = append(e.Players, p.ref(child))
		default:
			p.skip()
		}
	})
	return e
}
