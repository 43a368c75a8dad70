package sportdata

// event reads a <sport_event> or a <fixture>: the event, and the fixture's own details
// when f is not nil.
func (p *parser) event(elem string, f *Fixture) Event {
	var e Event
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			e.ID = p.urn(elem, n, v)
		case "name":
			e.Name = p.text(v)
		case "scheduled":
			e.Scheduled = p.time(elem, n, v)
		case "scheduled_end":
			e.ScheduledEnd = p.time(elem, n, v)
		case "start_time_tbd":
			e.StartTimeTBD = p.bool(elem, n, v)
		case "liveodds":
			e.LiveOdds = v
		}
		if f == nil {
			continue
		}
		switch n {
		case "start_time":
			f.StartTime = p.time(elem, n, v)
		case "start_time_confirmed":
			f.StartTimeConfirmed = p.bool(elem, n, v)
		case "next_live_time":
			f.NextLiveTime = p.time(elem, n, v)
		case "status":
			f.Status = v
		}
	}
	p.need(elem, e.ID)
	p.children(func(child string) {
		switch child {
		case "tournament":
			e.Tournament = p.tournament(&e)
		case "season":
			e.Season = p.ref(child)
		case "competitors":
			e.Competitors = make([]Competitor, 0, 2) // a match's two, most often
			p.each("competitor", func() {
				e.Competitors = append(e.Competitors, p.competitor())
			})
		case "venue":
			v := p.venue()
			e.Venue = &v
		case "tv_channels":
			if f == nil {
				p.skip()
				return
			}
			p.each("tv_channel", func() {
				f.TVChannels = append(f.TVChannels, p.tvChannel())
			})
		case "extra_info", "reference_ids":
			if f == nil {
				p.skip()
				return
			}
			list := &f.ExtraInfo
			item, key := "info", "key"
			if child == "reference_ids" {
				list, item, key = &f.ReferenceIDs, "reference_id", "name"
			}
			p.each(item, func() { *list = append(*list, p.info(key)) })
		default:
			p.skip()
		}
	})
	return e
}

// tournament reads an event's <tournament>, with the sport and category inside it.
func (p *parser) tournament(e *Event) Ref {
	var r Ref
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			r.ID = p.urn("tournament", n, v)
		case "name":
			r.Name = p.text(v)
		}
	}
	p.children(func(child string) {
		switch child {
		case "sport":
			e.Sport = p.ref(child)
		case "category":
			e.Category = p.ref(child)
		default:
			p.skip()
		}
	})
	return r
}

// ref reads an element's id and name, skipping its content.
func (p *parser) ref(elem string) Ref {
	var r Ref
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			r.ID = p.urn(elem, n, v)
		case "name":
			r.Name = p.text(v)
		}
	}
	p.need(elem, r.ID)
	p.skip()
	return r
}

func (p *parser) competitor() Competitor {
	var c Competitor
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "id":
			c.ID = p.urn("competitor", n, v)
		case "name":
			c.Name = p.text(v)
		case "abbreviation":
			c.Abbreviation = v
		case "qualifier":
			c.Qualifier = v
		case "country":
			c.Country = p.text(v)
		case "country_code":
			c.CountryCode = v
		case "gender":
			c.Gender = v
		}
	}
	p.need("competitor", c.ID)
	p.skip()
	return c
}

func (p *parser) venue() Venue {
	var v Venue
	for n, a, ok := p.attr(); ok; n, a, ok = p.attr() {
		switch n {
		case "id":
			v.ID = p.urn("venue", n, a)
		case "name":
			v.Name = p.text(a)
		case "city_name":
			v.City = p.text(a)
		case "country_name":
			v.Country = p.text(a)
		case "country_code":
			v.CountryCode = a
		case "capacity":
			v.Capacity = p.int("venue", n, a)
		case "map_coordinates":
			v.MapCoordinates = a
		}
	}
	p.need("venue", v.ID)
	p.skip()
	return v
}

func (p *parser) tvChannel() TVChannel {
	var t TVChannel
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case "name":
			t.Name = v
		case "start_time":
			t.StartTime = p.time("tv_channel", n, v)
		case "stream_url":
			t.StreamURL = v
		}
	}
	p.skip()
	return t
}

// info reads an <info key value> or a <reference_id name value>.
func (p *parser) info(key string) Info {
	var i Info
	for n, v, ok := p.attr(); ok; n, v, ok = p.attr() {
		switch n {
		case key:
			i.Key = v
		case "value":
			i.Value = v
		}
	}
	p.skip()
	return i
}
