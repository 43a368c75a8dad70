package feedtest

import (
	"fmt"
	"strconv"
)

// The market descriptions the simulator's Sports API serves: every market its traffic
// offers (marketCatalog), named as the feed's API names them, and a few more that use the
// other forms of name templates (ordinal, player, variant, flex-score, free-text
// variant), in English and German. Index 0 of a [2]string is English, 1 German.

// apiLanguages are the languages the simulator's API describes markets and events in.
var apiLanguages = map[string]int{"en": 0, "de": 1}

type apiOutcome struct {
	id   string
	name [2]string
}

type apiSpecifier struct{ name, typ, description string }

type apiMappingOutcome struct{ outcome, productOutcome, productName string }

type apiMapping struct {
	productID  int
	productIDs string
	sport      string
	marketID   string
	sov        string
	validFor   string
	outcomes   []apiMappingOutcome
}

type apiMarket struct {
	id          int
	name        [2]string
	groups      string
	outcomeType string // outcome_type
	includes    string // includes_outcomes_of_type
	outcomes    []apiOutcome
	specifiers  []apiSpecifier
	attributes  [][2]string // name, description
	mappings    []apiMapping
}

var (
	outcomesThreeWay = []apiOutcome{
		{"1", [2]string{"{$competitor1}", "{$competitor1}"}},
		{"2", [2]string{"draw", "unentschieden"}},
		{"3", [2]string{"{$competitor2}", "{$competitor2}"}},
	}
	mappingThreeWay = []apiMappingOutcome{{"1", "1", "1"}, {"2", "2", "X"}, {"3", "3", "2"}}
)

// apiMarkets is the market list of markets.xml, in the order served.
var apiMarkets = []apiMarket{
	{id: 1, name: [2]string{"1x2", "1x2"}, groups: "all|score|regular_play", outcomes: outcomesThreeWay,
		mappings: []apiMapping{
			{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "10", outcomes: mappingThreeWay},
			{productID: 3, productIDs: "3", sport: "sr:sport:1", marketID: "1", outcomes: mappingThreeWay},
		}},
	{id: 8, name: [2]string{"{!goalnr} goal", "{!goalnr} Tor"}, groups: "all|score|regular_play",
		outcomes: []apiOutcome{
			{"6", [2]string{"{$competitor1}", "{$competitor1}"}},
			{"7", [2]string{"none", "keines"}},
			{"8", [2]string{"{$competitor2}", "{$competitor2}"}},
		},
		specifiers: []apiSpecifier{{"goalnr", "integer", ""}},
		mappings: []apiMapping{{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "6:107", sov: "{$score}",
			outcomes: []apiMappingOutcome{{"6", "14", "1"}, {"7", "15", "x"}, {"8", "16", "2"}}}}},
	{id: 10, name: [2]string{"Double chance", "Doppelte Chance"}, groups: "all|score|regular_play",
		outcomes: []apiOutcome{
			{"9", [2]string{"{$competitor1} or draw", "{$competitor1} oder unentschieden"}},
			{"10", [2]string{"{$competitor1} or {$competitor2}", "{$competitor1} oder {$competitor2}"}},
			{"11", [2]string{"draw or {$competitor2}", "unentschieden oder {$competitor2}"}},
		},
		mappings: []apiMapping{{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "46",
			outcomes: []apiMappingOutcome{{"9", "1", "1X"}, {"10", "2", "12"}, {"11", "3", "X2"}}}}},
	{id: 16, name: [2]string{"Handicap {hcp}", "Handicap {hcp}"}, groups: "all|score|regular_play",
		outcomes: []apiOutcome{
			{"1714", [2]string{"{$competitor1} ({+hcp})", "{$competitor1} ({+hcp})"}},
			{"1715", [2]string{"{$competitor2} ({-hcp})", "{$competitor2} ({-hcp})"}},
		},
		specifiers: []apiSpecifier{{"hcp", "decimal", ""}},
		mappings: []apiMapping{{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "8:1090", sov: "{hcp}", validFor: "hcp~*.5",
			outcomes: []apiMappingOutcome{{"1714", "4983", "1"}, {"1715", "4985", "2"}}}}},
	{id: 18, name: [2]string{"Total", "Total"}, groups: "all|score|regular_play",
		outcomes: []apiOutcome{
			{"12", [2]string{"over {total}", "über {total}"}},
			{"13", [2]string{"under {total}", "unter {total}"}},
		},
		specifiers: []apiSpecifier{{"total", "decimal", ""}},
		mappings: []apiMapping{
			{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "8:232", sov: "{total}",
				outcomes: []apiMappingOutcome{{"13", "2528", "under"}, {"12", "2530", "over"}}},
			{productID: 3, productIDs: "3", sport: "sr:sport:1", marketID: "56", sov: "{total}",
				outcomes: []apiMappingOutcome{{"12", "12", "over"}, {"13", "13", "under"}}},
		}},
	{id: 21, name: [2]string{"Exact goals", "Genaue Anzahl Tore"}, groups: "all|score|regular_play",
		specifiers: []apiSpecifier{{"variant", "variable_text", ""}}},
	{id: 29, name: [2]string{"Both teams to score", "Beide Mannschaften treffen"}, groups: "all|score|regular_play",
		outcomes: []apiOutcome{{"74", [2]string{"yes", "ja"}}, {"76", [2]string{"no", "nein"}}},
		mappings: []apiMapping{{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "8:1244",
			outcomes: []apiMappingOutcome{{"74", "5968", "yes"}, {"76", "5970", "no"}}}}},
	{id: 40, name: [2]string{"Anytime goalscorer", "Torschütze jederzeit"}, groups: "all|regular_play|scorers",
		outcomeType: "player", includes: "sr:player",
		outcomes:   []apiOutcome{{"1716", [2]string{"no goal", "kein Tor"}}},
		specifiers: []apiSpecifier{{"type", "string", ""}}},
	{id: 41, name: [2]string{"Correct score [{score}]", "Korrektes Ergebnis [{score}]"}, groups: "all|score|regular_play",
		outcomes:   flexScoreOutcomes(),
		specifiers: []apiSpecifier{{"score", "string", "current score in match"}},
		attributes: [][2]string{{"is_flex_score", "Outcomes should be adjusted according to score specifier"}}},
	{id: 60, name: [2]string{"1st half - 1x2", "1. Halbzeit - 1x2"}, groups: "all|score|1st_half", outcomes: outcomesThreeWay,
		mappings: []apiMapping{{productID: 1, productIDs: "1|4", sport: "sr:sport:1", marketID: "6:103", outcomes: mappingThreeWay}}},
	{id: 534, name: [2]string{"Championship free text market", "Meisterschaft Freitext-Markt"}, groups: "all",
		specifiers: []apiSpecifier{{"variant", "variable_text", ""}}},
	{id: 1084, name: [2]string{"Exact strikes of {%player} {!appearancenr} time at bat", "Genaue Strikes von {%player} beim {!appearancenr} Schlagdurchgang"}, groups: "all",
		outcomes: []apiOutcome{
			{"1999", [2]string{"0", "0"}}, {"2000", [2]string{"1", "1"}},
			{"2001", [2]string{"2", "2"}}, {"2002", [2]string{"3", "3"}},
		},
		specifiers: []apiSpecifier{{"appearancenr", "integer", ""}, {"player", "string", ""}}},
}

// flexScoreOutcomes are the outcomes of market 41, scores added to the current one.
func flexScoreOutcomes() []apiOutcome {
	var out []apiOutcome
	id := 110
	for home := 0; home <= 3; home++ {
		for away := 0; home+away <= 3; away++ {
			s := fmt.Sprintf("%d:%d", home, away)
			out = append(out, apiOutcome{strconv.Itoa(id), [2]string{s, s}})
			id += 2
		}
	}
	return out
}

// apiVariant is a list of the variant list (variants.xml).
type apiVariant struct {
	id       string
	outcomes []apiOutcome
}

// apiVariants are the exact-goals lists, sr:exact_goals:2+ to sr:exact_goals:6+: a market
// 21 with variant=sr:exact_goals:4+ offers 0, 1, 2, 3 and 4+.
var apiVariants = exactGoalsVariants()

func exactGoalsVariants() []apiVariant {
	var out []apiVariant
	for top := 2; top <= 6; top++ {
		v := apiVariant{id: fmt.Sprintf("sr:exact_goals:%d+", top)}
		for goals := 0; goals <= top; goals++ {
			name := strconv.Itoa(goals)
			if goals == top {
				name += "+"
			}
			id := fmt.Sprintf("%s:%d", v.id, 1300+10*top+goals)
			v.outcomes = append(v.outcomes, apiOutcome{id, [2]string{name, name}})
		}
		out = append(out, v)
	}
	return out
}

// apiFreeText is a single-variant market (market 534, variant pre:markettext:N): its own
// name and outcomes, served by /markets/534/variants/pre:markettext:N only.
type apiFreeText struct {
	variant  string
	name     [2]string
	outcomes []apiOutcome
}

// apiFreeTexts: the winner of the simulated league, its outcomes the first six teams.
var apiFreeTexts = []apiFreeText{freeTextWinner()}

func freeTextWinner() apiFreeText {
	ft := apiFreeText{variant: "pre:markettext:1001", name: [2]string{"Simulated League 2026/27 - Winner", "Simulierte Liga 2026/27 - Sieger"}}
	for i := range 6 {
		ft.outcomes = append(ft.outcomes, apiOutcome{fmt.Sprintf("pre:outcometext:%d", 5001+i), [2]string{teamNames[i], teamNames[i]}})
	}
	return ft
}

func findAPIMarket(id int) (apiMarket, bool) {
	for _, m := range apiMarkets {
		if m.id == id {
			return m, true
		}
	}
	return apiMarket{}, false
}

func findAPIVariant(id string) (apiVariant, bool) {
	for _, v := range apiVariants {
		if v.id == id {
			return v, true
		}
	}
	return apiVariant{}, false
}

func (m apiMarket) hasVariantSpecifier() bool {
	for _, s := range m.specifiers {
		if s.name == "variant" {
			return true
		}
	}
	return false
}
