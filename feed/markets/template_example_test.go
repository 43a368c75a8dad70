package markets_test

import (
	"fmt"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
)

// matchNames names the competitors of one match; a resolver would take them from the
// event's summary in the language asked for.
type matchNames struct{ home, away string }

func (m matchNames) Competitor(n int) (string, error) {
	if n == 1 {
		return m.home, nil
	}
	return m.away, nil
}

func (m matchNames) Event() (string, error) { return markets.MatchEventName(m.home, m.away), nil }

func (m matchNames) Profile(urn feed.URN) (string, error) {
	return "", fmt.Errorf("no profile of %s", urn)
}

func ExampleTemplate_Render() {
	// Compile once per description, render per market line.
	home, _ := markets.ParseTemplate("{$competitor1} ({+hcp})")
	away, _ := markets.ParseTemplate("{$competitor2} ({-hcp})")
	line := feed.Specifiers("hcp=-1.5")
	ent := matchNames{home: "Bayern Munich", away: "Borussia Dortmund"}
	for _, t := range []*markets.Template{home, away} {
		name, err := t.Render(line, ent)
		fmt.Println(name, err)
	}

	inning, _ := markets.ParseTemplate("{!(inningnr+1)} inning")
	name, err := inning.Render("inningnr=2", nil) // needs no entity
	fmt.Println(name, err, inning.NeedsEntities())

	_, err = inning.Render("inningnr=2.5", nil)
	fmt.Println(err)
	// Output:
	// Bayern Munich (-1.5) <nil>
	// Borussia Dortmund (+1.5) <nil>
	// 3rd inning <nil> false
	// markets: template "{!(inningnr+1)} inning": {!(inningnr+1)}: specifier "inningnr": specifier value unfit: "2.5" is not an integer
}

func ExampleFlexScore() {
	// Market 41, "Correct score [{score}]", is a flex-score market: at 1:1, its outcome
	// "1:0" is the final score 2:1.
	name, err := markets.FlexScore("1:0", "1:1")
	fmt.Println(name, err)
	// Output: 2:1 <nil>
}
