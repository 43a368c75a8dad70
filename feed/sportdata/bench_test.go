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
	"github.com/feedkit/feedkit/internal/benchratio"
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
	xStatus struct {
		Status      string `xml:"status,attr"`
		MatchStatus string `xml:"match_status,attr"`
		HomeScore   string `xml:"home_score,attr"`
		AwayScore   string `xml:"away_score,attr"`
		Winner      string `xml:"winner_id,attr"`
	}
	xSummary struct {
		Event      xEvent   `xml:"sport_event"`
		Conditions *xVenue  `xml:"sport_event_conditions>venue"`
		Status     *xStatus `xml:"sport_event_status"`
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
		Event      xEvent   `xml:"sport_event"`
		Conditions *xVenue  `xml:"sport_event_conditions>venue"`
		Status     *xStatus `xml:"sport_event_status"`
		Events     []struct {
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
			// The players, scorers and assists in the document's order.
			Players []xPersonRef `xml:",any"`
		} `xml:"timeline>event"`
	}
	xPersonRef struct {
		XMLName xml.Name
		xRef
	}
	xSports struct {
		Sports []xRef `xml:"sport"`
	}
	xSportCategories struct {
		Sport      xRef        `xml:"sport"`
		Categories []xCategory `xml:"categories>category"`
	}
	xTournaments struct {
		Tournaments []xTournament `xml:"tournament"`
	}
	xTournamentSeasons struct {
		Tournament xTournament `xml:"tournament"`
		Seasons    []xSeason   `xml:"seasons>season"`
	}
	xTournamentSchedule struct {
		Events []xEvent `xml:"sport_events>sport_event"`
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

// document is a document of testdata with the parser that reads it and the reference.
type document struct {
	name       string
	body       []byte
	parse, ref func([]byte) (any, error)
	// timeParse and timeRef are parse and ref for the benchmark: without the boxing of
	// the value in an interface, which would cost each an allocation and a copy.
	timeParse, timeRef func([]byte) error
}

type reader struct {
	value func([]byte) (any, error)
	timed func([]byte) error
}

func both[V any](parse, ref func([]byte, string) (V, error)) (p, r reader) {
	return reader{func(b []byte) (any, error) { return parse(b, "en") }, func(b []byte) error { _, err := parse(b, "en"); return err }},
		reader{func(b []byte) (any, error) { return ref(b, "en") }, func(b []byte) error { _, err := ref(b, "en"); return err }}
}

// documents are every document type of the Sports API the package reads, from testdata.
func documents(t testing.TB) []document {
	var docs []document
	add := func(name string, body []byte, parse, ref reader) {
		docs = append(docs, document{name, body, parse.value, ref.value, parse.timed, ref.timed})
	}
	p, r := both(sportdata.ParseFixture, refFixture)
	add("fixture", testdata(t, "fixture.xml"), p, r)
	p, r = both(sportdata.ParseSummary, refSummary)
	add("match_summary", testdata(t, "match_summary.xml"), p, r)
	add("tournament_info", testdata(t, "tournament_info.xml"), p, r)
	p, r = both(sportdata.ParseCompetitorProfile, refCompetitorProfile)
	add("competitor_profile", testdata(t, "competitor_profile.xml"), p, r)
	p, r = both(sportdata.ParsePlayerProfile, refPlayerProfile)
	add("player_profile", testdata(t, "player_profile.xml"), p, r)
	p, r = both(sportdata.ParseSports, refSports)
	add("sports", testdata(t, "sports.xml"), p, r)
	p, r = both(sportdata.ParseSportCategories, refSportCategories)
	add("sport_categories", testdata(t, "sport_categories.xml"), p, r)
	p, r = both(sportdata.ParseTournaments, refTournaments)
	add("tournaments", testdata(t, "tournaments.xml"), p, r)
	p, r = both(sportdata.ParseTournamentSeasons, refTournamentSeasons)
	add("tournament_seasons", testdata(t, "tournament_seasons.xml"), p, r)
	p, r = both(sportdata.ParseTournamentSchedule, refTournamentSchedule)
	add("tournament_schedule", testdata(t, "tournament_schedule.xml"), p, r)
	p, r = both(sportdata.ParseTimeline, refTimeline)
	add("match_timeline", testdata(t, "match_timeline.xml"), p, r)
	p, r = both(sportdata.ParseSchedule, refSchedule)
	add("schedule", testdata(t, "schedule.xml"), p, r)
	add("schedule_500", bigSchedule(t, 500), p, r)
	return docs
}

// BenchmarkParseVsEncodingXML parses each document type with the package's parser, and
// reports how many times faster it is than the reference reading with encoding/xml
// (reference_test.go: the same values, converted the same way), measured in the same run
// by benchratio.InTurn (x-of-encoding-xml).
func BenchmarkParseVsEncodingXML(b *testing.B) {
	for _, d := range documents(b) {
		b.Run(d.name, func(b *testing.B) {
			for _, f := range []func([]byte) error{d.timeParse, d.timeRef} {
				if err := f(d.body); err != nil {
					b.Fatal(err)
				}
			}
			ratio := benchratio.InTurn(func() { _ = d.timeParse(d.body) }, func() { _ = d.timeRef(d.body) })
			b.SetBytes(int64(len(d.body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.timeParse(d.body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ratio, "x-of-encoding-xml")
		})
	}
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
