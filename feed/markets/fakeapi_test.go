package markets_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/feedkit/feedkit/feed"
)

// fakeAPI serves documents by path (the query is ignored) and counts the requests per
// path. A path without a document is a 404 *feed.APIError, as the API answers.
type fakeAPI struct {
	mu     sync.Mutex
	docs   map[string]string
	fail   map[string]int // path → status to answer with instead
	counts map[string]int
}

func newFakeAPI() *fakeAPI {
	a := &fakeAPI{docs: map[string]string{}, fail: map[string]int{}, counts: map[string]int{}}
	for lang, names := range langNames {
		a.docs["v1/descriptions/"+lang+"/markets.xml"] = marketsDoc(names)
		a.docs["v1/descriptions/"+lang+"/variants.xml"] = variantsDoc
		a.docs["v1/descriptions/"+lang+"/markets/534/variants/pre:markettext:222539"] = singleVariantDoc
		a.docs["v1/sports/"+lang+"/sport_events/sr:match:1/summary.xml"] = fmt.Sprintf(summaryDoc, names.home, names.away)
		for id, name := range map[int]string{7: "Kane, Harry", 8: "Saka, Bukayo"} {
			a.docs[fmt.Sprintf("v1/sports/%s/players/sr:player:%d/profile.xml", lang, id)] =
				fmt.Sprintf(`<player_profile><player id="sr:player:%d" name="%s" type="forwards"/></player_profile>`, id, name)
		}
	}
	return a
}

func (a *fakeAPI) Get(_ context.Context, path string, max int64) ([]byte, error) {
	p, _, _ := strings.Cut(path, "?")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts[p]++
	if status, ok := a.fail[p]; ok {
		return nil, &feed.APIError{StatusCode: status, Method: http.MethodGet, URL: "https://api.test/" + path}
	}
	doc, ok := a.docs[p]
	if !ok {
		return nil, &feed.APIError{StatusCode: http.StatusNotFound, Method: http.MethodGet, URL: "https://api.test/" + path}
	}
	if int64(len(doc)) > max {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", path, max)
	}
	return []byte(doc), nil
}

func (a *fakeAPI) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[path]
}

func (a *fakeAPI) set(path, doc string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.docs[path] = doc
}

func (a *fakeAPI) failWith(path string, status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if status == 0 {
		delete(a.fail, path)
		return
	}
	a.fail[path] = status
}

type translated struct {
	home, away, total, over, under, handicap, goal, none, draw string
}

var langNames = map[string]translated{
	"en": {"Arsenal FC", "Chelsea FC", "Total", "over", "under", "Handicap", "goal", "none", "draw"},
	"de": {"Arsenal London", "FC Chelsea", "Total", "über", "unter", "Handicap", "Tor", "kein", "unentschieden"},
	"fr": {"Arsenal FC", "Chelsea FC", "Total", "plus de", "moins de", "Handicap", "but", "aucun", "match nul"},
}

// marketsDoc is a markets.xml of real markets, their names in one language.
func marketsDoc(t translated) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<market_descriptions response_code="OK">
 <market id="1" name="1x2" groups="all|score|regular_play">
  <outcomes>
   <outcome id="1" name="{$competitor1}"/><outcome id="2" name="` + t.draw + `"/><outcome id="3" name="{$competitor2}"/>
  </outcomes>
 </market>
 <market id="8" name="{!goalnr} ` + t.goal + `" groups="all|score|regular_play">
  <outcomes>
   <outcome id="6" name="{$competitor1}"/><outcome id="7" name="` + t.none + `"/><outcome id="8" name="{$competitor2}"/>
  </outcomes>
  <specifiers><specifier name="goalnr" type="integer"/></specifiers>
 </market>
 <market id="16" name="` + t.handicap + ` {hcp}" groups="all|score|regular_play">
  <outcomes>
   <outcome id="1714" name="{$competitor1} ({+hcp})"/><outcome id="1715" name="{$competitor2} ({-hcp})"/>
  </outcomes>
  <specifiers><specifier name="hcp" type="decimal"/></specifiers>
 </market>
 <market id="18" name="` + t.total + `" groups="all|score|regular_play">
  <outcomes>
   <outcome id="12" name="` + t.over + ` {total}"/><outcome id="13" name="` + t.under + ` {total}"/>
  </outcomes>
  <specifiers><specifier name="total" type="decimal"/></specifiers>
  <mappings>
   <mapping product_id="1" product_ids="1|4" sport_id="sr:sport:1" market_id="56" sov_template="{total}" valid_for="total~*.5">
    <mapping_outcome outcome_id="12" product_outcome_id="12" product_outcome_name="over"/>
    <mapping_outcome outcome_id="13" product_outcome_id="13" product_outcome_name="under"/>
   </mapping>
  </mappings>
 </market>
 <market id="21" name="Exact goals" groups="all|score|regular_play">
  <specifiers><specifier name="variant" type="variable_text"/></specifiers>
 </market>
 <market id="40" name="Anytime goalscorer" groups="all|regular_play" outcome_type="player"/>
 <market id="41" name="Correct score [{score}]" groups="all|score|regular_play">
  <outcomes>
   <outcome id="110" name="0:0"/><outcome id="114" name="1:0"/><outcome id="116" name="0:1"/><outcome id="1000" name="other"/>
  </outcomes>
  <specifiers><specifier name="score" type="string"/></specifiers>
  <attributes><attribute name="is_flex_score" description="Outcomes should be adjusted according to score specifier"/></attributes>
 </market>
 <market id="282" name="Innings 1 to 5th top - {$competitor1} total" groups="all|score|4.5_innings">
  <outcomes><outcome id="13" name="under {total}"/><outcome id="12" name="over {total}"/></outcomes>
  <specifiers><specifier name="total" type="decimal"/></specifiers>
 </market>
 <market id="534" name="Championship free text market" groups="all">
  <specifiers><specifier name="variant" type="variable_text"/></specifiers>
 </market>
 <market id="919" name="{%player} points (incl. overtime)" groups="all|player_props">
  <outcomes><outcome id="12" name="over {total}"/><outcome id="13" name="under {total}"/></outcomes>
  <specifiers><specifier name="player" type="string"/><specifier name="total" type="decimal"/></specifiers>
 </market>
 <market id="145" name="{$event} - {!inningnr} innings" groups="all">
  <outcomes><outcome id="1" name="{$competitor1}"/><outcome id="2" name="{$competitor2}"/></outcomes>
  <specifiers><specifier name="inningnr" type="integer"/></specifiers>
 </market>
</market_descriptions>`
}

const variantsDoc = `<?xml version="1.0" encoding="UTF-8"?>
<variant_descriptions response_code="OK">
 <variant id="sr:exact_goals:4+">
  <outcomes>
   <outcome id="sr:exact_goals:4+:1" name="0"/><outcome id="sr:exact_goals:4+:2" name="1"/>
   <outcome id="sr:exact_goals:4+:3" name="2"/><outcome id="sr:exact_goals:4+:4" name="3"/>
   <outcome id="sr:exact_goals:4+:5" name="4+"/>
  </outcomes>
 </variant>
</variant_descriptions>`

const singleVariantDoc = `<?xml version="1.0" encoding="UTF-8"?>
<market_descriptions response_code="OK">
 <market id="534" name="Top batsman" groups="all" variant="pre:markettext:222539">
  <outcomes>
   <outcome id="pre:outcometext:11706414" name="Weatherald, Jake"/>
   <outcome id="pre:outcometext:11706416" name="Hughes, Daniel Peter"/>
  </outcomes>
 </market>
</market_descriptions>`

const summaryDoc = `<?xml version="1.0" encoding="UTF-8"?>
<match_summary xmlns="http://schemas.sportradar.com/sportsapi/v1/unified" generated_at="2026-11-26T12:00:00+00:00">
 <sport_event id="sr:match:1" scheduled="2026-11-26T20:00:00+00:00" start_time_tbd="false">
  <tournament id="sr:tournament:17" name="Premier League"/>
  <competitors>
   <competitor qualifier="away" id="sr:competitor:38" name="%[2]s" abbreviation="CHE"/>
   <competitor qualifier="home" id="sr:competitor:42" name="%[1]s" abbreviation="ARS"/>
  </competitors>
 </sport_event>
</match_summary>`
