package markets

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/feedkit/feedkit/feed"
)

// testEntities names the competitors, the event and the profiles of one match, and counts
// the calls so that a test sees which entities a template asked for.
type testEntities struct {
	home, away string
	event      string
	profiles   map[feed.URN]string
	err        error // returned by every method when set
	calls      int
}

func (e *testEntities) Competitor(n int) (string, error) {
	e.calls++
	if e.err != nil {
		return "", e.err
	}
	switch n {
	case 1:
		return e.home, nil
	case 2:
		return e.away, nil
	}
	return "", fmt.Errorf("no competitor %d", n)
}

func (e *testEntities) Event() (string, error) {
	e.calls++
	return e.event, e.err
}

func (e *testEntities) Profile(urn feed.URN) (string, error) {
	e.calls++
	if e.err != nil {
		return "", e.err
	}
	name, ok := e.profiles[urn]
	if !ok {
		return "", fmt.Errorf("no profile %s", urn)
	}
	return name, nil
}

func match() *testEntities {
	return &testEntities{
		home:  "Bayern Munich",
		away:  "Borussia Dortmund",
		event: MatchEventName("Bayern Munich", "Borussia Dortmund"),
		profiles: map[feed.URN]string{
			feed.MustParseURN("sr:player:1234"):   "Kane, Harry",
			feed.MustParseURN("sr:competitor:42"): "Jannik Sinner",
		},
	}
}

// TestRender renders the forms of the templates real market descriptions write, with real
// specifier values; the expected names are those the Java and .NET SDKs' tests expect
// where they agree, and this package's documented choice where they differ.
func TestRender(t *testing.T) {
	tests := []struct {
		template, specs, want string
	}{
		// Text only, and the specifier as sent.
		{"Draw", "", "Draw"},
		{"", "", ""},
		{"Total {total}", "total=2.5", "Total 2.5"},
		{"over {total}", "total=2.50", "over 2.50"},
		{"under {total}", "total=-0.0", "under -0.0"},
		{"When will the {runnr} run be scored", "inningnr=5|runnr=2", "When will the 2 run be scored"},
		{"{!runnr} run in {inningnr}", "inningnr=5|runnr=2", "2nd run in 5"},
		{"Correct score [{score}]", "score=1:0", "Correct score [1:0]"},

		// {+X} and {-X}: the Java and .NET tests' values (quarternr, hcp).
		{"{+quarternr}", "quarternr=0", "0"},
		{"{+quarternr}", "quarternr=-0", "0"},
		{"{+quarternr}", "quarternr=0.0", "0"},
		{"{+quarternr}", "quarternr=2", "+2"},
		{"{+quarternr}", "quarternr=-3", "-3"},
		{"{+quarternr}", "quarternr=2.5", "+2.5"},
		{"{+quarternr}", "quarternr=-3.25", "-3.25"},
		{"{+hcp}", "hcp=+0.25", "+0.25"},
		{"{+hcp}", "hcp=0.75", "+0.75"},
		{"{+hcp}", "hcp=+1", "+1"},
		{"{+hcp}", "hcp=1.50", "+1.50"},
		{"{+hcp}", "hcp=007.5", "+7.5"},
		{"{+hcp}", "hcp=-1.75", "-1.75"},
		{"{-quarternr}", "quarternr=0", "0"},
		{"{-quarternr}", "quarternr=-0", "0"},
		{"{-quarternr}", "quarternr=2", "-2"},
		{"{-quarternr}", "quarternr=-3", "+3"},
		{"{-quarternr}", "quarternr=2.5", "-2.5"},
		{"{-quarternr}", "quarternr=-3.25", "+3.25"},
		{"{$competitor1} ({+hcp})", "hcp=-1.5", "Bayern Munich (-1.5)"},
		{"{$competitor2} ({-hcp})", "hcp=-1.5", "Borussia Dortmund (+1.5)"},
		{"{$competitor1} ({+hcp})", "hcp=0", "Bayern Munich (0)"},
		{"{$competitor2} ({-hcp})", "hcp=0.25", "Borussia Dortmund (-0.25)"},
		{"{+inningnr} inning", "inningnr=5|runnr=2", "+5 inning"},
		{"{-inningnr} inning", "inningnr=5|runnr=2", "-5 inning"},

		// {!X}: English ordinals, 11th to 13th at every hundred.
		{"{!periodnr} period - {$competitor1} total", "periodnr=1", "1st period - Bayern Munich total"},
		{"{!periodnr} period - {$competitor1} total", "periodnr=2", "2nd period - Bayern Munich total"},
		{"{!periodnr} period - {$competitor1} total", "periodnr=3", "3rd period - Bayern Munich total"},
		{"{!periodnr} period", "periodnr=4", "4th period"},
		{"{!periodnr} period", "periodnr=0", "0th period"},
		{"{!goalnr} goal", "goalnr=11", "11th goal"},
		{"{!goalnr} goal", "goalnr=12", "12th goal"},
		{"{!goalnr} goal", "goalnr=13", "13th goal"},
		{"{!goalnr} goal", "goalnr=21", "21st goal"},
		{"{!goalnr} goal", "goalnr=22", "22nd goal"},
		{"{!goalnr} goal", "goalnr=23", "23rd goal"},
		{"{!goalnr} goal", "goalnr=101", "101st goal"},
		{"{!goalnr} goal", "goalnr=102", "102nd goal"},
		{"{!goalnr} goal", "goalnr=111", "111th goal"},
		{"{!goalnr} goal", "goalnr=112", "112th goal"},
		{"{!goalnr} goal", "goalnr=113", "113th goal"},
		{"{!goalnr} goal", "goalnr=1000", "1000th goal"},
		{"{!goalnr} goal", "goalnr=+2", "2nd goal"},
		{"When will the {!runnr} run be scored (incl. extra innings)", "inningnr=5|runnr=3", "When will the 3rd run be scored (incl. extra innings)"},
		{"{!inningnr} inning", "inningnr=5|runnr=2", "5th inning"},
		{"{!inningnr} inning and {runnr}", "inningnr=5|runnr=2", "5th inning and 2"},

		// Arithmetic: .NET's MarketWithOddsNameTests (inningnr=5|runnr=2), constant-first
		// included, and Java's calculated inningnr and mapnr cases.
		{"{(inningnr+1)} inning", "inningnr=5|runnr=2", "6 inning"},
		{"{(inningnr-1)} inning", "inningnr=5|runnr=2", "4 inning"},
		{"{(1+inningnr)} inning", "inningnr=5|runnr=2", "6 inning"},
		{"{(10-inningnr)} inning", "inningnr=5|runnr=2", "5 inning"},
		{"{!(inningnr+1)} inning", "inningnr=5|runnr=2", "6th inning"},
		{"{!(inningnr-1)} inning", "inningnr=5|runnr=2", "4th inning"},
		{"{!(1+inningnr)} inning", "inningnr=5|runnr=2", "6th inning"},
		{"{!(10-inningnr)} inning", "inningnr=5|runnr=2", "5th inning"},
		{"When will the {(runnr+1)} run be scored", "inningnr=5|runnr=2", "When will the 3 run be scored"},
		{"When will the {(4-runnr)} run be scored", "inningnr=5|runnr=2", "When will the 2 run be scored"},
		{"When will the {!(5-runnr)} run be scored", "inningnr=5|runnr=2", "When will the 3rd run be scored"},
		{"{!(inningnr+1)} inning", "inningnr=1", "2nd inning"},
		{"{!(inningnr+1)} inning", "inningnr=2", "3rd inning"},
		{"{!(inningnr+2)} inning", "inningnr=4", "6th inning"},
		{"{!(mapnr-0)} map", "mapnr=2", "2nd map"},
		{"{!(mapnr-11)} map", "mapnr=13", "2nd map"},
		{"{(inningnr-3)}", "inningnr=2", "-1"},
		{"{(inningnr+4)}", "inningnr=-5", "-1"},
		{"{(inningnr-33)}", "inningnr=33", "0"},
		{"{(mapnr+11)}", "mapnr=4", "15"},
		{"{!mapnr} map - {(minute-1)}:00 to {minute}:00", "mapnr=1|minute=10", "1st map - 9:00 to 10:00"},
		{"{+(hcp+1)}", "hcp=0.50", "+1.50"},
		{"{+(hcp+1)}", "hcp=-1.5", "-0.5"},
		{"{+(hcp+1)}", "hcp=-1", "0"},
		{"{-(hcp-2)}", "hcp=0.25", "+1.75"},
		{"{+(3-hcp)}", "hcp=3.5", "-0.5"},

		// Entities.
		{"{$competitor1}", "", "Bayern Munich"},
		{"{$competitor1} or draw", "", "Bayern Munich or draw"},
		{"{$event}", "", "Bayern Munich vs Borussia Dortmund"},
		{"{%player} to score", "player=sr:player:1234", "Kane, Harry to score"},
		{"Exact strikes of {%player} {!appearancenr} time at bat", "player=sr:player:1234|appearancenr=2", "Exact strikes of Kane, Harry 2nd time at bat"},
		{"{%server} to win the {!gamenr} game", "server=sr:competitor:42|gamenr=3", "Jannik Sinner to win the 3rd game"},
	}
	for _, tt := range tests {
		t.Run(tt.template+"/"+tt.specs, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.template)
			if err != nil {
				t.Fatalf("ParseTemplate: %v", err)
			}
			got, err := tpl.Render(feed.Specifiers(tt.specs), match())
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
			if tpl.String() != tt.template {
				t.Errorf("String = %q, want %q", tpl.String(), tt.template)
			}
		})
	}
}

// TestRenderErrors checks that a specifier or entity that is missing or unfit gives an error
// naming the template, the expression and the specifier, never a name.
func TestRenderErrors(t *testing.T) {
	failing := errors.New("summary endpoint: 503")
	tests := []struct {
		template, specs string
		ent             Entities // match() when nil and noEnt is false
		noEnt           bool
		is              error
		specifier, msg  string
	}{
		{template: "Total {total}", specs: "hcp=1", is: ErrSpecifierMissing, specifier: "total"},
		{template: "Total {total}", specs: "", is: ErrSpecifierMissing, specifier: "total"},
		{template: "Total {total}", specs: "total=", is: ErrSpecifierValue, specifier: "total", msg: "empty"},
		{template: "{!periodnr} period", specs: "periodnr=1.5", is: ErrSpecifierValue, specifier: "periodnr", msg: "not an integer"},
		{template: "{!periodnr} period", specs: "periodnr=first", is: ErrSpecifierValue, specifier: "periodnr", msg: "not an integer"},
		{template: "{!periodnr} period", specs: "periodnr=2147483648", is: ErrSpecifierValue, specifier: "periodnr", msg: "not an integer"},
		{template: "{!periodnr} period", specs: "periodnr=-1", is: ErrSpecifierValue, specifier: "periodnr", msg: "negative"},
		{template: "{!(inningnr-3)} inning", specs: "inningnr=2", is: ErrSpecifierValue, specifier: "inningnr", msg: "negative"},
		{template: "{(minute-1)}", specs: "minute=2.1", is: ErrSpecifierValue, specifier: "minute", msg: "not an integer"},
		{template: "{(minute+1)}", specs: "minute=2147483647", is: ErrSpecifierValue, specifier: "minute", msg: "overflows"},
		{template: "{(1-minute)}", specs: "minute=-2147483648", is: ErrSpecifierValue, specifier: "minute", msg: "overflows"},
		{template: "{+hcp}", specs: "hcp=abc", is: ErrSpecifierValue, specifier: "hcp", msg: "not a decimal"},
		{template: "{+hcp}", specs: "hcp=1e3", is: ErrSpecifierValue, specifier: "hcp", msg: "not a decimal"},
		{template: "{+hcp}", specs: "hcp=NaN", is: ErrSpecifierValue, specifier: "hcp", msg: "not a decimal"},
		{template: "{+hcp}", specs: "hcp=.5", is: ErrSpecifierValue, specifier: "hcp", msg: "not a decimal"},
		{template: "{-hcp}", specs: "hcp=1.", is: ErrSpecifierValue, specifier: "hcp", msg: "not a decimal"},
		{template: "{-hcp}", specs: "hcp=1:0", is: ErrSpecifierValue, specifier: "hcp", msg: "not a decimal"},
		{template: "{+(hcp+1)}", specs: "hcp=1234567890.123456789", is: ErrSpecifierValue, specifier: "hcp", msg: "18 digits"},
		{template: "{+(hcp+2147483647)}", specs: "hcp=0.000000000000000001", is: ErrSpecifierValue, specifier: "hcp", msg: "overflows"},
		{template: "{%player} to score", specs: "player=1234", is: ErrSpecifierValue, specifier: "player", msg: "not a URN"},
		{template: "{%player} to score", specs: "player=sr:player:x", is: ErrSpecifierValue, specifier: "player", msg: "not a URN"},
		{template: "{%player} to score", specs: "total=1", is: ErrSpecifierMissing, specifier: "player"},
		{template: "{%player} to score", specs: "player=sr:player:1", specifier: "player", msg: "no profile sr:player:1"},
		{template: "{$competitor1} ({+hcp})", specs: "hcp=1", noEnt: true, is: ErrNoEntities},
		{template: "{$event}", noEnt: true, is: ErrNoEntities},
		{template: "{%player} to score", specs: "player=sr:player:1234", noEnt: true, is: ErrNoEntities, specifier: "player"},
		{template: "{$competitor2}", ent: &testEntities{err: failing}, is: failing},
		{template: "{$event}", ent: &testEntities{err: failing}, is: failing},
		{template: "{%player}", specs: "player=sr:player:1234", ent: &testEntities{err: failing}, is: failing, specifier: "player"},
		{template: "{$competitor1} or draw", ent: &testEntities{home: ""}, is: ErrEmptyName},
		{template: "{$event}", ent: &testEntities{}, is: ErrEmptyName},
	}
	for _, tt := range tests {
		t.Run(tt.template+"/"+tt.specs, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.template)
			if err != nil {
				t.Fatalf("ParseTemplate: %v", err)
			}
			ent := tt.ent
			if ent == nil && !tt.noEnt {
				ent = match()
			}
			got, err := tpl.Render(feed.Specifiers(tt.specs), ent)
			if err == nil {
				t.Fatalf("Render = %q, want an error", got)
			}
			if got != "" {
				t.Errorf("Render returned %q beside its error", got)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %T is not a *TemplateError", err)
			}
			if te.Template != tt.template || te.Specifier != tt.specifier {
				t.Errorf("TemplateError names template %q specifier %q, want %q and %q", te.Template, te.Specifier, tt.template, tt.specifier)
			}
			if te.Expression == "" || !strings.HasPrefix(tt.template[te.Offset:], te.Expression) {
				t.Errorf("TemplateError expression %q at %d is not in the template", te.Expression, te.Offset)
			}
			msg := err.Error()
			for _, want := range []string{fmt.Sprintf("%q", tt.template), te.Expression, tt.msg} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
			if tt.specifier != "" && !strings.Contains(msg, fmt.Sprintf("specifier %q", tt.specifier)) {
				t.Errorf("error %q does not name specifier %q", msg, tt.specifier)
			}
		})
	}
}

// TestParseTemplateErrors checks that malformed templates fail at ParseTemplate with the byte
// offset of the fault; the .NET SDK's NameExpressionHelperTests and OperandFactoryTests
// supply most of them.
func TestParseTemplateErrors(t *testing.T) {
	tests := []struct {
		template string
		offset   int
		msg      string
	}{
		{"{", 0, "'{' without '}'"},
		{"Total {total", 6, "'{' without '}'"},
		{"Competitor {$competitor1} to {score points", 29, "'{' without '}'"},
		{"{$competitor1} to {score", 18, "'{' without '}'"},
		{"}", 0, "'}' without '{'"},
		{"Total total}", 11, "'}' without '{'"},
		{"Competitor $competitor1} to {score} points", 23, "'}' without '{'"},
		{"{total}} goals", 7, "'}' without '{'"},
		{"{}", 0, "empty expression"},
		{"Total {} goals", 6, "empty expression"},
		{"a {b{c}}", 4, "'{' inside an expression"},
		{"{*total}", 0, "unknown operator"},
		{"x {?total}", 2, "unknown operator"},
		{"{ total}", 0, "unknown operator"},
		{"{total }", 0, "not a specifier name"},
		{"{to tal}", 0, "not a specifier name"},
		{"{+}", 0, "without operand"},
		{"{-}", 0, "without operand"},
		{"{!}", 0, "without operand"},
		{"{%}", 0, "specifier name"},
		{"{%(player+1)}", 0, "specifier name"},
		{"{$}", 0, "unknown entity"},
		{"{$competitor3}", 0, "unknown entity"},
		{"{$competitor12}", 0, "unknown entity"},
		{"{$Event}", 0, "unknown entity"},
		{"{+$competitor1}", 0, "not a specifier name"},
		{"{total+1)}", 0, "not a specifier name"},
		{"{(total+1}", 0, "'(' without ')'"},
		{"{(total1}", 0, "'(' without ')'"},
		{"{(}", 0, "'(' without ')'"},
		{"{(total1)}", 0, "one '+' or '-'"},
		{"{(total*1)}", 0, "one '+' or '-'"},
		{"{(total+1+2)}", 0, "one '+' or '-'"},
		{"{(total-1-2)}", 0, "one '+' or '-'"},
		{"{(total+1-2)}", 0, "one '+' or '-'"},
		{"{(total+1.1)}", 0, "(name+constant)"},
		{"{(total+abc)}", 0, "(name+constant)"},
		{"{(total+)}", 0, "(name+constant)"},
		{"{(+1)}", 0, "(name+constant)"},
		{"{(1+2)}", 0, "(name+constant)"},
		{"{(a+b)}", 0, "(name+constant)"},
		{"{(total+-1)}", 0, "one '+' or '-'"},
		{"{!(inningnr+99999999999)} inning", 0, "not a 32-bit integer"},
		{"{!(inningnr+2147483648)} inning", 0, "not a 32-bit integer"},
		{"{!((inningnr+1))} inning", 0, "(name+constant)"},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.template)
			if err == nil {
				t.Fatalf("ParseTemplate = %v, want an error", tpl)
			}
			if tpl != nil {
				t.Errorf("ParseTemplate returned a template beside its error")
			}
			if !errors.Is(err, ErrTemplateSyntax) {
				t.Errorf("error %v is not ErrTemplateSyntax", err)
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %T is not a *TemplateError", err)
			}
			if te.Template != tt.template || te.Offset != tt.offset {
				t.Errorf("TemplateError at %q byte %d, want %q byte %d", te.Template, te.Offset, tt.template, tt.offset)
			}
			msg := err.Error()
			for _, want := range []string{fmt.Sprintf("%q", tt.template), fmt.Sprintf("at byte %d", tt.offset), tt.msg} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
		})
	}
}

// TestTemplateNeeds checks that a template reports the entities it asks for and no others,
// and that a template that needs none renders with nil Entities.
func TestTemplateNeeds(t *testing.T) {
	tests := []struct {
		template, specs string
		needs           EntityNeeds
		calls           int
	}{
		{"Total {total}", "total=2.5", 0, 0},
		{"{!(inningnr+1)} inning", "inningnr=1", 0, 0},
		{"Draw", "", 0, 0},
		{"{$competitor1} ({+hcp})", "hcp=1", NeedsCompetitors, 1},
		{"{$competitor1} vs {$competitor2}", "", NeedsCompetitors, 2},
		{"{$event} - winner", "", NeedsEvent, 1},
		{"{%player} to score", "player=sr:player:1234", NeedsProfiles, 1},
		{"{%player} or {$competitor2}, {$event}", "player=sr:player:1234", NeedsCompetitors | NeedsEvent | NeedsProfiles, 3},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.template)
			if err != nil {
				t.Fatal(err)
			}
			if tpl.Needs() != tt.needs || tpl.NeedsEntities() != (tt.needs != 0) {
				t.Errorf("Needs = %b, NeedsEntities = %v, want %b", tpl.Needs(), tpl.NeedsEntities(), tt.needs)
			}
			ent := match()
			withEnt, err := tpl.Render(feed.Specifiers(tt.specs), ent)
			if err != nil {
				t.Fatal(err)
			}
			if ent.calls != tt.calls {
				t.Errorf("Render made %d Entities calls, want %d", ent.calls, tt.calls)
			}
			if tt.needs == 0 {
				withoutEnt, err := tpl.Render(feed.Specifiers(tt.specs), nil)
				if err != nil || withoutEnt != withEnt {
					t.Errorf("Render with nil Entities = %q, %v; want %q", withoutEnt, err, withEnt)
				}
			}
		})
	}
}

// TestRenderAllocs checks the promise of Render's doc: the returned string is its only
// allocation when the entities' names do not allocate.
// RenderIn writes ordinals in French where French names are asked for, as the Java
// SDK's ICU does (masculine, never grouped here), and in English for every other
// language, as Render does.
func TestRenderInWritesFrenchOrdinals(t *testing.T) {
	tpl, err := ParseTemplate("{!goalnr} but - {!(periodnr+1)} set")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lang, specs, want string
	}{
		{"fr", "goalnr=1|periodnr=0", "1er but - 1er set"},
		{"fr", "goalnr=2|periodnr=1", "2e but - 2e set"},
		{"fr", "goalnr=11|periodnr=20", "11e but - 21e set"},
		{"fr", "goalnr=1000|periodnr=100", "1000e but - 101e set"},
		{"fr-CA", "goalnr=1|periodnr=2", "1er but - 3e set"},
		{"FR", "goalnr=3|periodnr=2", "3e but - 3e set"},
		{"en", "goalnr=1|periodnr=1", "1st but - 2nd set"},
		{"de", "goalnr=3|periodnr=10", "3rd but - 11th set"},
		{"fro", "goalnr=1|periodnr=1", "1st but - 2nd set"}, // Old French is not "fr"
	} {
		got, err := tpl.RenderIn(c.lang, feed.Specifiers(c.specs), nil)
		if err != nil || got != c.want {
			t.Errorf("RenderIn(%q, %s) = %q, %v; want %q", c.lang, c.specs, got, err, c.want)
		}
	}
	if got, _ := tpl.Render("goalnr=1|periodnr=0", nil); got != "1st but - 1st set" {
		t.Errorf("Render = %q: English", got)
	}
	if _, err := tpl.RenderIn("fr", "goalnr=-1|periodnr=0", nil); !errors.Is(err, ErrSpecifierValue) {
		t.Errorf("a negative ordinal in French: %v, want ErrSpecifierValue", err)
	}
}

func TestRenderAllocs(t *testing.T) {
	tpl, err := ParseTemplate("{!periodnr} period - {$competitor1} ({+hcp}) total {(total-1)}")
	if err != nil {
		t.Fatal(err)
	}
	specs := feed.Specifiers("periodnr=2|hcp=-0.75|total=4")
	ent := constEntities{}
	const want = "2nd period - Bayern Munich (-0.75) total 3"
	if got, err := tpl.Render(specs, ent); err != nil || got != want {
		t.Fatalf("Render = %q, %v; want %q", got, err, want)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tpl.Render(specs, ent); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 {
		t.Errorf("Render allocates %v times, want 1 (the name)", allocs)
	}
}

// constEntities names a match's competitors without allocating.
type constEntities struct{}

func (constEntities) Competitor(n int) (string, error) {
	if n == 1 {
		return "Bayern Munich", nil
	}
	return "Borussia Dortmund", nil
}
func (constEntities) Event() (string, error)           { return "Bayern Munich vs Borussia Dortmund", nil }
func (constEntities) Profile(feed.URN) (string, error) { return "Kane, Harry", nil }

func TestFlexScore(t *testing.T) {
	tests := []struct{ outcome, score, want string }{
		{"1:0", "1:1", "2:1"},
		{"0:0", "0:0", "0:0"},
		{"2:3", "0:1", "2:4"},
		{"0:0", "3:2", "3:2"},
		{"10:0", "1:12", "11:12"},
		{"01:0", "0:0", "1:0"},
		{"1.5:2.5", "1:1", "2.5:3.5"},
		{"0.5:0", "1:1", "1.5:1"},
		{"1:0", "1.0:0", "2.0:0"},
	}
	for _, tt := range tests {
		got, err := FlexScore(tt.outcome, tt.score)
		if err != nil || got != tt.want {
			t.Errorf("FlexScore(%q, %q) = %q, %v; want %q", tt.outcome, tt.score, got, err, tt.want)
		}
	}
}

func TestFlexScoreErrors(t *testing.T) {
	tests := []struct {
		outcome, score string
		badScore       bool // the score specifier is at fault, not the outcome's name
	}{
		{"23", "0:0", false},
		{"2:3:4", "0:0", false},
		{":3", "0:0", false},
		{"3:", "0:0", false},
		{"d:3", "0:0", false},
		{"3:a", "0:0", false},
		{"(3:3)", "0:0", false},
		{"1-0", "0:0", false},
		{"{$competitor1}", "0:0", false},
		{"-1:0", "0:0", false},
		{"+1:0", "0:0", false},
		{"1e1:0", "0:0", false},
		{"", "0:0", false},
		{"1:0", "", true},
		{"1:0", "1", true},
		{"1:0", "1:1:1", true},
		{"1:0", "1:0:", true},
		{"1:0", "-1:0", true},
		{"1:0", " 1:0", true},
		{"1:0", "1234567890123456789:0", true},
	}
	for _, tt := range tests {
		got, err := FlexScore(tt.outcome, tt.score)
		if err == nil {
			t.Errorf("FlexScore(%q, %q) = %q, want an error", tt.outcome, tt.score, got)
			continue
		}
		if errors.Is(err, ErrSpecifierValue) != tt.badScore {
			t.Errorf("FlexScore(%q, %q): errors.Is(%v, ErrSpecifierValue) = %v, want %v", tt.outcome, tt.score, err, !tt.badScore, tt.badScore)
		}
		name := fmt.Sprintf("outcome name %q", tt.outcome)
		if tt.badScore {
			name = fmt.Sprintf("score=%q", tt.score)
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("FlexScore(%q, %q) error %q does not name %s", tt.outcome, tt.score, err, name)
		}
	}
}

// FuzzParseTemplate checks that any template either fails to parse with a syntax error at
// an offset inside it, or parses and renders, with any specifiers, to a name or an error
// naming it; never a panic. A template without braces renders as itself.
func FuzzParseTemplate(f *testing.F) {
	for _, seed := range [][2]string{
		{"{$competitor1} ({+hcp})", "hcp=-1.5"},
		{"{!periodnr} period - {$competitor1} total", "periodnr=2"},
		{"{!(inningnr+1)} inning", "inningnr=5|runnr=2"},
		{"{(10-inningnr)} inning", "inningnr=5"},
		{"{+(hcp+1)}", "hcp=0.50"},
		{"{%player} to score", "player=sr:player:1234"},
		{"{$event}", ""},
		{"Total {total}", "total=2.50"},
		{"{(minute-1)}", "minute=2.1"},
		{"Competitor $competitor1} to {score} points", "score=1:0"},
		{"a {b{c}}", ""},
		{"{}", ""},
		{"Draw", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, src, specs string) {
		tpl, err := ParseTemplate(src)
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) || !errors.Is(err, ErrTemplateSyntax) {
				t.Fatalf("ParseTemplate(%q) error %v is not a syntax *TemplateError", src, err)
			}
			if te.Template != src || te.Offset < 0 || te.Offset >= len(src) {
				t.Fatalf("ParseTemplate(%q) error at byte %d of %q", src, te.Offset, te.Template)
			}
			return
		}
		if tpl.String() != src {
			t.Fatalf("String = %q, want %q", tpl.String(), src)
		}
		name, err := tpl.Render(feed.Specifiers(specs), match())
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) || te.Template != src || te.Expression == "" || !strings.HasPrefix(src[te.Offset:], te.Expression) {
				t.Fatalf("Render(%q) error %v does not name its expression in the template", src, err)
			}
			if name != "" {
				t.Fatalf("Render(%q) returned %q beside error %v", src, name, err)
			}
		} else if !strings.ContainsAny(src, "{}") && name != src {
			t.Fatalf("Render(%q) = %q", src, name)
		}
		if !tpl.NeedsEntities() {
			again, err2 := tpl.Render(feed.Specifiers(specs), nil)
			if again != name || (err == nil) != (err2 == nil) {
				t.Fatalf("Render(%q) with nil Entities = %q, %v; with them %q, %v", src, again, err2, name, err)
			}
		}
	})
}
