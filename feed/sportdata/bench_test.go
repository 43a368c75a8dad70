package sportdata_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata"
)

// The encoding/xml baseline: xml.Unmarshal into structs of the same attributes the
// parsers read, the values left as strings (the parsers also convert them).
type (
	xRef struct {
		ID   string `xml:"id,attr"`
		Name string `xml:"name,attr"`
	}
	xCompetitor struct {
		ID           string `xml:"id,attr"`
		Name         string `xml:"name,attr"`
		Abbreviation string `xml:"abbreviation,attr"`
		Qualifier    string `xml:"qualifier,attr"`
		Country      string `xml:"country,attr"`
		CountryCode  string `xml:"country_code,attr"`
		Gender       string `xml:"gender,attr"`
	}
	xVenue struct {
		ID             string `xml:"id,attr"`
		Name           string `xml:"name,attr"`
		Capacity       string `xml:"capacity,attr"`
		City           string `xml:"city_name,attr"`
		Country        string `xml:"country_name,attr"`
		CountryCode    string `xml:"country_code,attr"`
		MapCoordinates string `xml:"map_coordinates,attr"`
	}
	xInfo struct {
		Key   string `xml:"key,attr"`
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	xEvent struct {
		ID                 string `xml:"id,attr"`
		Name               string `xml:"name,attr"`
		Scheduled          string `xml:"scheduled,attr"`
		ScheduledEnd       string `xml:"scheduled_end,attr"`
		StartTimeTBD       string `xml:"start_time_tbd,attr"`
		LiveOdds           string `xml:"liveodds,attr"`
		StartTime          string `xml:"start_time,attr"`
		StartTimeConfirmed string `xml:"start_time_confirmed,attr"`
		NextLiveTime       string `xml:"next_live_time,attr"`
		Status             string `xml:"status,attr"`
		Tournament         struct {
			xRef
			Sport    xRef `xml:"sport"`
			Category xRef `xml:"category"`
		} `xml:"tournament"`
		Season      xRef          `xml:"season"`
		Competitors []xCompetitor `xml:"competitors>competitor"`
		Venue       *xVenue       `xml:"venue"`
		TVChannels  []struct {
			Name      string `xml:"name,attr"`
			StartTime string `xml:"start_time,attr"`
			StreamURL string `xml:"stream_url,attr"`
		} `xml:"tv_channels>tv_channel"`
		ExtraInfo    []xInfo `xml:"extra_info>info"`
		ReferenceIDs []xInfo `xml:"reference_ids>reference_id"`
	}
	xFixture struct {
		Fixture xEvent `xml:"fixture"`
	}
	xSummary struct {
		Event      xEvent  `xml:"sport_event"`
		Conditions *xVenue `xml:"sport_event_conditions>venue"`
		Status     *struct {
			Status      string `xml:"status,attr"`
			MatchStatus string `xml:"match_status,attr"`
			HomeScore   string `xml:"home_score,attr"`
			AwayScore   string `xml:"away_score,attr"`
			Winner      string `xml:"winner_id,attr"`
		} `xml:"sport_event_status"`
	}
	xPlayer struct {
		ID           string `xml:"id,attr"`
		Name         string `xml:"name,attr"`
		FullName     string `xml:"full_name,attr"`
		Type         string `xml:"type,attr"`
		DateOfBirth  string `xml:"date_of_birth,attr"`
		Nationality  string `xml:"nationality,attr"`
		CountryCode  string `xml:"country_code,attr"`
		JerseyNumber string `xml:"jersey_number,attr"`
		Gender       string `xml:"gender,attr"`
	}
	xCompetitorProfile struct {
		Competitor xCompetitor `xml:"competitor"`
		Players    []xPlayer   `xml:"players>player"`
	}
	xPlayerProfile struct {
		Player xPlayer `xml:"player"`
	}
	xSchedule struct {
		Events []xEvent `xml:"sport_event"`
	}
	xCategory struct {
		xRef
		CountryCode string `xml:"country_code,attr"`
	}
	xSeason struct {
		xRef
		StartDate  string `xml:"start_date,attr"`
		EndDate    string `xml:"end_date,attr"`
		Year       string `xml:"year,attr"`
		Tournament string `xml:"tournament_id,attr"`
	}
	xTournament struct {
		xRef
		Sport         xRef      `xml:"sport"`
		Category      xCategory `xml:"category"`
		CurrentSeason *xSeason  `xml:"current_season"`
	}
	xTimeline struct {
		Event      xEvent  `xml:"sport_event"`
		Conditions *xVenue `xml:"sport_event_conditions>venue"`
		Status     *struct {
			Status string `xml:"status,attr"`
		} `xml:"sport_event_status"`
		Events []struct {
			ID         string `xml:"id,attr"`
			Type       string `xml:"type,attr"`
			Time       string `xml:"time,attr"`
			MatchTime  string `xml:"match_time,attr"`
			MatchClock string `xml:"match_clock,attr"`
			Team       string `xml:"team,attr"`
			Period     string `xml:"period,attr"`
			PeriodName string `xml:"period_name,attr"`
			HomeScore  string `xml:"home_score,attr"`
			AwayScore  string `xml:"away_score,attr"`
			Player     []xRef `xml:"player"`
			Assist     []xRef `xml:"assist"`
			Scorer     []xRef `xml:"goal_scorer"`
		} `xml:"timeline>event"`
	}
)

// bigSchedule is a day's schedule of n matches, as the API sends for a busy Saturday.
func bigSchedule(b testing.TB, n int) []byte {
	doc := string(testdata(b, "schedule.xml"))
	start := strings.Index(doc, "  <sport_event ")
	end := strings.Index(doc, "</sport_event>\n") + len("</sport_event>\n")
	match := doc[start:end]
	var buf bytes.Buffer
	buf.WriteString(doc[:start])
	for i := range n {
		buf.WriteString(strings.Replace(match, "sr:match:41234567", fmt.Sprintf("sr:match:%d", 50_000_000+i), 1))
	}
	buf.WriteString(doc[end:])
	return buf.Bytes()
}

// BenchmarkParseVsEncodingXML parses each document type with the package's parser and
// with encoding/xml in the same run, and reports the ratio (x-of-encoding-xml).
func BenchmarkParseVsEncodingXML(b *testing.B) {
	docs := []struct {
		name  string
		body  []byte
		parse func([]byte) error
		ref   func([]byte) error
	}{
		{"fixture", testdata(b, "fixture.xml"),
			func(d []byte) error { _, err := sportdata.ParseFixture(d, "en"); return err },
			func(d []byte) error { var x xFixture; return xml.Unmarshal(d, &x) }},
		{"match_summary", testdata(b, "match_summary.xml"),
			func(d []byte) error { _, err := sportdata.ParseSummary(d, "en"); return err },
			func(d []byte) error { var x xSummary; return xml.Unmarshal(d, &x) }},
		{"tournament_info", testdata(b, "tournament_info.xml"),
			func(d []byte) error { _, err := sportdata.ParseSummary(d, "en"); return err },
			func(d []byte) error {
				var x struct {
					Tournament struct {
						xRef
						Sport    xRef `xml:"sport"`
						Category xRef `xml:"category"`
					} `xml:"tournament"`
					Season xRef `xml:"season"`
				}
				return xml.Unmarshal(d, &x)
			}},
		{"competitor_profile", testdata(b, "competitor_profile.xml"),
			func(d []byte) error { _, err := sportdata.ParseCompetitorProfile(d, "en"); return err },
			func(d []byte) error { var x xCompetitorProfile; return xml.Unmarshal(d, &x) }},
		{"player_profile", testdata(b, "player_profile.xml"),
			func(d []byte) error { _, err := sportdata.ParsePlayerProfile(d, "en"); return err },
			func(d []byte) error { var x xPlayerProfile; return xml.Unmarshal(d, &x) }},
		{"sports", testdata(b, "sports.xml"),
			func(d []byte) error { _, err := sportdata.ParseSports(d, "en"); return err },
			func(d []byte) error {
				var x struct {
					Sports []xRef `xml:"sport"`
				}
				return xml.Unmarshal(d, &x)
			}},
		{"sport_categories", testdata(b, "sport_categories.xml"),
			func(d []byte) error { _, err := sportdata.ParseSportCategories(d, "en"); return err },
			func(d []byte) error {
				var x struct {
					Sport      xRef        `xml:"sport"`
					Categories []xCategory `xml:"categories>category"`
				}
				return xml.Unmarshal(d, &x)
			}},
		{"tournaments", testdata(b, "tournaments.xml"),
			func(d []byte) error { _, err := sportdata.ParseTournaments(d, "en"); return err },
			func(d []byte) error {
				var x struct {
					Tournaments []xTournament `xml:"tournament"`
				}
				return xml.Unmarshal(d, &x)
			}},
		{"tournament_seasons", testdata(b, "tournament_seasons.xml"),
			func(d []byte) error { _, err := sportdata.ParseTournamentSeasons(d, "en"); return err },
			func(d []byte) error {
				var x struct {
					Tournament xTournament `xml:"tournament"`
					Seasons    []xSeason   `xml:"seasons>season"`
				}
				return xml.Unmarshal(d, &x)
			}},
		{"tournament_schedule", testdata(b, "tournament_schedule.xml"),
			func(d []byte) error { _, err := sportdata.ParseTournamentSchedule(d, "en"); return err },
			func(d []byte) error {
				var x struct {
					Tournament xTournament `xml:"tournament"`
					Events     []xEvent    `xml:"sport_events>sport_event"`
				}
				return xml.Unmarshal(d, &x)
			}},
		{"match_timeline", testdata(b, "match_timeline.xml"),
			func(d []byte) error { _, err := sportdata.ParseTimeline(d, "en"); return err },
			func(d []byte) error { var x xTimeline; return xml.Unmarshal(d, &x) }},
		{"schedule", testdata(b, "schedule.xml"),
			func(d []byte) error { _, err := sportdata.ParseSchedule(d, "en"); return err },
			func(d []byte) error { var x xSchedule; return xml.Unmarshal(d, &x) }},
		{"schedule_500", bigSchedule(b, 500),
			func(d []byte) error { _, err := sportdata.ParseSchedule(d, "en"); return err },
			func(d []byte) error { var x xSchedule; return xml.Unmarshal(d, &x) }},
	}
	for _, d := range docs {
		b.Run(d.name, func(b *testing.B) {
			ratio := bestOf(b, d.body, d.parse, d.ref)
			b.SetBytes(int64(len(d.body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.parse(d.body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ratio, "x-of-encoding-xml")
		})
	}
}

// bestOf times the parser and the baseline in turn for a second, in batches of about
// 100 µs, and returns the ratio of their fastest batches: on a busy machine a slow spell
// then slows neither more than the other.
func bestOf(b *testing.B, doc []byte, parse, ref func([]byte) error) float64 {
	if err := parse(doc); err != nil {
		b.Fatal(err)
	}
	if err := ref(doc); err != nil {
		b.Fatal(err)
	}
	t := time.Now()
	_ = ref(doc)
	batch := max(1, int(100*time.Microsecond/max(time.Since(t), 1)))
	timed := func(f func([]byte) error) time.Duration {
		t := time.Now()
		for range batch {
			_ = f(doc)
		}
		return time.Since(t)
	}
	bestRef, bestFast := time.Duration(1<<62), time.Duration(1<<62)
	for n, start := 0, time.Now(); n < 10 || time.Since(start) < time.Second; n++ {
		bestRef = min(bestRef, timed(ref))
		bestFast = min(bestFast, timed(parse))
	}
	return float64(bestRef) / float64(bestFast)
}

// BenchmarkCachedRead reads one fixture the cache holds, in the default language, on the
// wall clock, as a program reads it.
func BenchmarkCachedRead(b *testing.B) {
	w := newWorld(b, 50)
	p, err := sportdata.New(w.api, sportdata.Config{})
	if err != nil {
		b.Fatal(err)
	}
	var u feed.URN
	for m := range w.matches() {
		u = m
		break
	}
	ctx := context.Background()
	if _, err := p.Fixture(ctx, u); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Fixture(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmUp makes a Provider hold the fixtures, summaries and home teams' profiles
// of every match of the simulator's traffic, in two languages: from an export of
// another Provider (import), and from the simulator's API over HTTP on loopback (api),
// in the same run; import-x-faster is their ratio.
func BenchmarkWarmUp(b *testing.B) {
	w := newWorld(b, 2000)
	cfg := sportdata.Config{Languages: []string{"en", "de"}}
	ctx := context.Background()
	var ids []feed.URN
	for u := range w.matches() {
		ids = append(ids, u)
	}
	readAll := func(p *sportdata.Provider) {
		for _, u := range ids {
			f, err := p.Fixture(ctx, u)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Summary(ctx, u); err != nil {
				b.Fatal(err)
			}
			home, _ := f.Event.Home()
			if _, err := p.Competitor(ctx, home.ID); err != nil {
				b.Fatal(err)
			}
		}
	}
	src := w.provider(b, cfg)
	readAll(src)
	var export bytes.Buffer
	if err := src.Export(&export); err != nil {
		b.Fatal(err)
	}
	var apiPer time.Duration
	b.Run("api", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			readAll(w.provider(b, cfg))
		}
		apiPer = time.Since(start) / time.Duration(b.N)
		b.ReportMetric(float64(len(ids)), "matches")
	})
	b.Run("import", func(b *testing.B) {
		b.SetBytes(int64(export.Len()))
		start := time.Now()
		for b.Loop() {
			p := w.provider(b, cfg)
			if _, err := p.Import(bytes.NewReader(export.Bytes())); err != nil {
				b.Fatal(err)
			}
			readAll(p)
		}
		per := time.Since(start) / time.Duration(b.N)
		if apiPer > 0 {
			b.ReportMetric(float64(apiPer)/float64(per), "import-x-faster")
		}
	})
}
