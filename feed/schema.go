package feed

import "strings"

// SchemaViolation names attributes that the feed's schema (UnifiedFeed.xsd) requires and
// that a message lacked, where the decoder reads the message anyway rather than lose what
// else it says (see the package doc, "Required attributes"). The values combine as bits;
// Header.SchemaViolations holds those of one message, 0 for a message that has them all.
//
// A field whose attribute is named here reads as the zero its doc gives for "absent",
// whatever the zero might otherwise mean: a sport event status whose status is missing
// reads Status 0, which here is not "not started".
type SchemaViolation uint32

// The required attributes a message may lack and still be decoded.
const (
	// MissingGroups: bet_stop/@groups. BetStop.Groups is empty: no group was named,
	// which is not "all".
	MissingGroups SchemaViolation = 1 << iota
	// MissingCertainty: bet_settlement/@certainty. BetSettlement.Certainty is 0.
	MissingCertainty
	// MissingStartTime: fixture_change/@start_time. FixtureChange.StartTime is zero.
	MissingStartTime
	// MissingStatus: sport_event_status/@status. SportEventStatus.Status is 0, which
	// here does not mean "not started".
	MissingStatus
	// MissingMatchStatus: sport_event_status/@match_status. SportEventStatus.MatchStatus
	// is 0, which here does not mean "not started".
	MissingMatchStatus
	// MissingPeriodNumber: period_score/@number, in one period score or more, whose
	// Number reads 0.
	MissingPeriodNumber
	// MissingPeriodMatchStatusCode: period_score/@match_status_code; it reads 0.
	MissingPeriodMatchStatusCode
	// MissingPeriodScore: period_score/@home_score or @away_score; the score reads 0.
	MissingPeriodScore
	// MissingResultMatchStatusCode: results/result/@match_status_code; it reads 0.
	MissingResultMatchStatusCode
	// MissingResultScore: results/result/@home_score or @away_score; the score reads 0.
	MissingResultScore
	// MissingStatisticsCount: the home or away attribute of a statistics count
	// (yellow_cards, red_cards, yellow_red_cards, corners, green_cards, tries). The
	// count's StatusField bit is left clear, so that SportEventStatus.Has does not offer a
	// half count as a value.
	MissingStatisticsCount

	numSchemaViolations = iota
)

var schemaViolationNames = [numSchemaViolations]string{
	"bet_stop/@groups",
	"bet_settlement/@certainty",
	"fixture_change/@start_time",
	"sport_event_status/@status",
	"sport_event_status/@match_status",
	"period_score/@number",
	"period_score/@match_status_code",
	"period_score/@home_score|@away_score",
	"result/@match_status_code",
	"result/@home_score|@away_score",
	"statistics count/@home|@away",
}

// Has reports whether v names every attribute in w.
func (v SchemaViolation) Has(w SchemaViolation) bool { return v&w == w }

// String lists the attributes v names, such as "bet_stop/@groups", separated by ", "; it
// is empty for 0.
func (v SchemaViolation) String() string {
	if v == 0 {
		return ""
	}
	var b strings.Builder
	for i, name := range schemaViolationNames {
		if v&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
	}
	if rest := v &^ (1<<numSchemaViolations - 1); rest != 0 {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("unknown violations")
	}
	return b.String()
}
