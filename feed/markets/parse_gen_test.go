package markets

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// buildMarketsDoc builds a markets.xml?include_mappings=true document of n markets, in
// memory, shaped like the real one: market kinds as the API has them (three-way and
// two-way winners, totals and handicaps with decimal specifiers, ordinal period markets,
// yes/no, correct scores, flex-score, player and competitor markets, variant markets),
// with period prefixes, groups, mappings to several sports and products with their
// outcome mappings, and the odd entity reference and non-ASCII name. The same n gives the
// same document.
func buildMarketsDoc(n int) []byte {
	rng := rand.New(rand.NewPCG(22, uint64(n)))
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	b.WriteString(`<market_descriptions response_code="OK">` + "\n")
	for id := 1; id <= n; id++ {
		k := marketKinds[rng.IntN(len(marketKinds))]
		prefix := periodPrefixes[rng.IntN(len(periodPrefixes))]
		writeGenMarket(&b, rng, id, k, prefix)
	}
	b.WriteString("</market_descriptions>\n")
	return []byte(b.String())
}

type genOutcome struct{ id, name string }

type marketKind struct {
	name       string
	groups     string
	outcomes   []genOutcome
	specifiers [][2]string // name, type
	attrs      string      // extra attributes of <market>
	flex       bool
	sov        string // mapping sov_template
}

type periodPrefix struct {
	text, specifier, group string
}

var periodPrefixes = []periodPrefix{
	{"", "", "regular_play"},
	{"", "", "regular_play"},
	{"1st half - ", "", "1st_half"},
	{"2nd half - ", "", "2nd_half"},
	{"{!periodnr} period - ", "periodnr", "period"},
	{"{!mapnr} map - ", "mapnr", "map"},
	{"{!setnr} set - ", "setnr", "set"},
	{"{!inningnr} innings - ", "inningnr", "innings"},
	{"{!quarternr} quarter - ", "quarternr", "quarter"},
	{"Overtime - ", "", "ot"},
}

var (
	threeWay = []genOutcome{{"1", "{$competitor1}"}, {"2", "draw"}, {"3", "{$competitor2}"}}
	twoWay   = []genOutcome{{"4", "{$competitor1}"}, {"5", "{$competitor2}"}}
	overUnd  = []genOutcome{{"12", "over {total}"}, {"13", "under {total}"}}
	handicap = []genOutcome{{"1714", "{$competitor1} ({+hcp})"}, {"1715", "{$competitor2} ({-hcp})"}}
	yesNo    = []genOutcome{{"74", "yes"}, {"76", "no"}}
	oddEven  = []genOutcome{{"70", "odd"}, {"72", "even"}}
	double   = []genOutcome{{"9", "{$competitor1} or draw"}, {"10", "{$competitor1} or {$competitor2}"}, {"11", "draw or {$competitor2}"}}
)

func correctScore(max int) []genOutcome {
	var out []genOutcome
	id := 110
	for h := 0; h <= max; h++ {
		for a := 0; h+a <= max; a++ {
			out = append(out, genOutcome{fmt.Sprint(id), fmt.Sprintf("%d:%d", h, a)})
			id += 2
		}
	}
	return out
}

var marketKinds = []marketKind{
	{name: "1x2", groups: "all|score", outcomes: threeWay, sov: ""},
	{name: "Winner", groups: "all|score", outcomes: twoWay},
	{name: "Draw no bet", groups: "all|score", outcomes: twoWay},
	{name: "Double chance", groups: "all|score", outcomes: double},
	{name: "Total", groups: "all|score", outcomes: overUnd, specifiers: [][2]string{{"total", "decimal"}}, sov: "{total}"},
	{name: "{$competitor1} total", groups: "all|score", outcomes: overUnd, specifiers: [][2]string{{"total", "decimal"}}, sov: "{total}"},
	{name: "{$competitor2} total", groups: "all|score", outcomes: overUnd, specifiers: [][2]string{{"total", "decimal"}}, sov: "{total}"},
	{name: "Handicap {hcp}", groups: "all|score", outcomes: handicap, specifiers: [][2]string{{"hcp", "decimal"}}, sov: "{hcp}"},
	{name: "Total corners", groups: "all|corners", outcomes: overUnd, specifiers: [][2]string{{"total", "decimal"}}, sov: "{total}"},
	{name: "Both teams to score", groups: "all|score", outcomes: yesNo},
	{name: "{$competitor1} clean sheet", groups: "all|score", outcomes: yesNo},
	{name: "Odd/even", groups: "all|score", outcomes: oddEven},
	{name: "{!goalnr} goal", groups: "all|score", outcomes: []genOutcome{{"6", "{$competitor1}"}, {"7", "none"}, {"8", "{$competitor2}"}}, specifiers: [][2]string{{"goalnr", "integer"}}, sov: "{goalnr}"},
	{name: "1x2 &amp; total", groups: "all|score|combo", outcomes: []genOutcome{{"794", "{$competitor1} &amp; under {total}"}, {"796", "{$competitor1} &amp; over {total}"}, {"798", "draw &amp; under {total}"}, {"800", "draw &amp; over {total}"}, {"802", "{$competitor2} &amp; under {total}"}, {"804", "{$competitor2} &amp; over {total}"}}, specifiers: [][2]string{{"total", "decimal"}}, sov: "{total}"},
	{name: "Correct score", groups: "all|score", outcomes: correctScore(6)},
	{name: "Correct score [{score}]", groups: "all|score", outcomes: correctScore(5), specifiers: [][2]string{{"score", "string"}}, flex: true, sov: "{$score}"},
	{name: "Anytime goalscorer", groups: "all|scorers", outcomes: []genOutcome{{"1716", "no goal"}}, specifiers: [][2]string{{"type", "string"}}, attrs: ` includes_outcomes_of_type="sr:player" outcome_type="player"`},
	{name: "Top {winners} (teams)", groups: "all", specifiers: [][2]string{{"winners", "integer"}}, attrs: ` includes_outcomes_of_type="sr:competitor" outcome_type="competitor"`},
	{name: "Exact goals", groups: "all|score", specifiers: [][2]string{{"variant", "variable_text"}}},
	{name: "{%player} total passes", groups: "all|player_props", outcomes: overUnd, specifiers: [][2]string{{"player", "string"}, {"total", "decimal"}}},
	{name: "Race to {pointnr} points", groups: "all|score", outcomes: []genOutcome{{"4", "{$competitor1}"}, {"5", "{$competitor2}"}, {"6", "none"}}, specifiers: [][2]string{{"pointnr", "integer"}}},
	{name: "Halbzeit/Endstand – Über/Unter", groups: "all|score", outcomes: overUnd, specifiers: [][2]string{{"total", "decimal"}}},
	{name: "Winning margin (incl. overtime)", groups: "all|incl_ot", outcomes: []genOutcome{{"630", "{$competitor1} by 1"}, {"632", "{$competitor1} by 2"}, {"634", "{$competitor1} by 3+"}, {"636", "{$competitor2} by 1"}, {"638", "{$competitor2} by 2"}, {"640", "{$competitor2} by 3+"}}},
}

var genSports = []string{"sr:sport:1", "sr:sport:2", "sr:sport:4", "sr:sport:5", "sr:sport:6", "sr:sport:12", "sr:sport:20", "sr:sport:23"}

func writeGenMarket(b *strings.Builder, rng *rand.Rand, id int, k marketKind, p periodPrefix) {
	name := p.text + k.name
	if p.text != "" {
		name = p.text + strings.ToLower(k.name[:1]) + k.name[1:]
	}
	groups := strings.Replace(k.groups, "|", "|"+p.group+"|", 1)
	fmt.Fprintf(b, "  <market id=\"%d\" name=\"%s\" groups=\"%s\"%s>\n", id, name, groups, k.attrs)
	if len(k.outcomes) > 0 {
		b.WriteString("    <outcomes>\n")
		for _, o := range k.outcomes {
			fmt.Fprintf(b, "      <outcome id=\"%s\" name=\"%s\"/>\n", o.id, o.name)
		}
		b.WriteString("    </outcomes>\n")
	}
	specs := k.specifiers
	if p.specifier != "" {
		specs = append([][2]string{{p.specifier, "integer"}}, specs...)
	}
	if len(specs) > 0 {
		b.WriteString("    <specifiers>\n")
		for _, s := range specs {
			if s[0] == "score" {
				fmt.Fprintf(b, "      <specifier name=\"%s\" type=\"%s\" description=\"current score in match\"/>\n", s[0], s[1])
			} else {
				fmt.Fprintf(b, "      <specifier name=\"%s\" type=\"%s\"/>\n", s[0], s[1])
			}
		}
		b.WriteString("    </specifiers>\n")
	}
	if nm := rng.IntN(4); nm > 0 && len(k.outcomes) > 0 {
		b.WriteString("    <mappings>\n")
		for i := 0; i < nm; i++ {
			sport := genSports[rng.IntN(len(genSports))]
			var attrs string
			if i%2 == 0 {
				attrs = fmt.Sprintf(`product_id="1" product_ids="1|4" sport_id="%s" market_id="8:%d"`, sport, 100+rng.IntN(2000))
			} else {
				attrs = fmt.Sprintf(`product_id="3" product_ids="3" sport_id="%s" market_id="%d"`, sport, 1+rng.IntN(700))
			}
			if k.sov != "" {
				attrs += fmt.Sprintf(` sov_template="%s"`, k.sov)
			}
			if p.specifier != "" {
				attrs += fmt.Sprintf(` valid_for="%s=%d"`, p.specifier, 1+rng.IntN(4))
			}
			fmt.Fprintf(b, "      <mapping %s>\n", attrs)
			for j, o := range k.outcomes {
				fmt.Fprintf(b, "        <mapping_outcome outcome_id=\"%s\" product_outcome_id=\"%d\" product_outcome_name=\"%s\"/>\n", o.id, 2000+j*2, o.name)
			}
			b.WriteString("      </mapping>\n")
		}
		b.WriteString("    </mappings>\n")
	}
	if k.flex {
		b.WriteString("    <attributes>\n      <attribute name=\"is_flex_score\" description=\"Outcomes should be adjusted according to score specifier\"/>\n    </attributes>\n")
	}
	b.WriteString("  </market>\n")
}
