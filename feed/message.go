package feed

import (
	"iter"
	"strconv"
	"strings"
	"time"
)

// Message is a decoded feed message: one of *OddsChange, *BetStop, *BetSettlement,
// *RollbackBetSettlement, *BetCancel, *RollbackBetCancel, *FixtureChange, *Cashout, *Alive
// and *SnapshotComplete.
//
// String fields of a decoded message share memory with one copy of the message body, so
// keeping any of them keeps that copy (about the body's size) alive.
type Message interface {
	// Type returns the message's type.
	Type() MessageType
	// MessageHeader returns the attributes every message carries.
	MessageHeader() *Header
}

// Header holds the attributes common to all feed messages.
type Header struct {
	Producer  int       // the product attribute: id of the producer that sent the message
	Event     URN       // the event_id attribute; zero in system messages
	Timestamp time.Time // when the feed generated the message, in UTC with millisecond precision
	// RequestID is the id of the recovery request this message answers, or 0 for a message
	// of the live stream.
	RequestID int64
	// SchemaViolations names the attributes the schema requires that the message lacked
	// and that the decoder read as absent instead of refusing the message (the package
	// doc's "Required attributes" says which); 0 for a message that has them all. A
	// session counts the messages with any (SessionStats.SchemaViolations).
	SchemaViolations SchemaViolation
	// ReceivedAt is when the transport received the message. Sessions set it; Decode leaves
	// it zero.
	ReceivedAt time.Time
}

// MessageHeader returns h. It lets every message type satisfy Message through embedding.
func (h *Header) MessageHeader() *Header { return h }

// OddsChange carries new odds for some markets of an event, and the event's status.
// Markets not listed keep their previous odds.
type OddsChange struct {
	Header
	ChangeReason  int               // odds_change_reason: 1 risk adjustment; 0 when absent (a normal update)
	BettingStatus int               // odds/@betting_status; 0 when absent
	BetstopReason int               // odds/@betstop_reason; 0 when absent
	EventStatus   *SportEventStatus // sport_event_status; nil when absent
	// OddsGeneration is the odds_generation_properties element, which the prematch
	// producer alone sends; nil when absent.
	OddsGeneration *OddsGeneration
	Markets        []OddsMarket
}

// OddsGeneration holds a few parameters of the producer's odds model, for a customer's own
// model or spread betting. Each value is meaningful only with its Has flag set: the feed
// may send one without the other, and 0 is a value (an even match has supremacy 0). Both
// may be ±Inf or NaN (the schema's INF, -INF, NaN): test with math.IsInf and math.IsNaN.
type OddsGeneration struct {
	ExpectedTotals       float64 // expected_totals: how many goals (points) in all
	HasExpectedTotals    bool
	ExpectedSupremacy    float64 // expected_supremacy: the expected goal difference, home minus away
	HasExpectedSupremacy bool
}

// Type returns MessageOddsChange.
func (*OddsChange) Type() MessageType { return MessageOddsChange }

// MarketStatus is the state of a market line. Its zero value is MarketActive, what the
// feed means by a market line that comes without a status, so that a market built by
// hand is active unless said otherwise. Its value is therefore not the feed's number:
// Code returns that, MarketStatusOfCode goes the other way.
type MarketStatus int8

// Market statuses; the feed numbers them 1 (active), 0, -1, ... -4 (cancelled).
const (
	MarketActive      MarketStatus = iota // 1 in the feed
	MarketDeactivated                     // 0
	MarketSuspended                       // -1
	MarketHandedOver                      // -2
	MarketSettled                         // -3
	MarketCancelled                       // -4
)

// MarketStatusOfCode returns the status the feed numbers code. Every code is a status:
// one the kit has no name for keeps its number (Code returns it).
func MarketStatusOfCode(code int8) MarketStatus {
	// 1 - code, in int8's arithmetic, which wraps: a one-to-one map of every code, with
	// the feed's 1 on the zero value and the named statuses in their order.
	return MarketStatus(1 - code)
}

// Code returns the feed's number of the status: 1 active, 0 deactivated, -1 suspended,
// -2 handed over, -3 settled, -4 cancelled.
func (s MarketStatus) Code() int { return int(1 - int8(s)) }

var marketStatusNames = [...]string{"active", "deactivated", "suspended", "handed over", "settled", "cancelled"}

// String names the status, or gives its feed code for one the kit has no name for.
func (s MarketStatus) String() string {
	if s >= 0 && int(s) < len(marketStatusNames) {
		return marketStatusNames[s]
	}
	return "market status " + strconv.Itoa(s.Code())
}

// OddsMarket is one market line of an odds change.
type OddsMarket struct {
	ID                 int
	Specifiers         Specifiers   // such as "total=2.5"; empty for a market with one line
	ExtendedSpecifiers Specifiers   // extended_specifiers
	Status             MarketStatus // MarketActive (the zero value) when the attribute is absent, as the feed defines
	Favourite          bool         // the recommended line of a multi-line market
	// CashoutStatus is the cashout_status attribute; CashoutNone (the zero value, a code
	// the feed does not use) when absent.
	CashoutStatus CashoutStatus
	Metadata      MarketMetadata // market_metadata; every field zero when absent
	Outcomes      []OddsOutcome
}

// CashoutStatus says whether bets on a market line can be cashed out. Its value is the
// feed's code.
type CashoutStatus int8

// Cashout statuses. The feed sends 1, -1 and -2; CashoutNone, the zero value, stands for
// an absent attribute (a "0" in the feed, which it does not send, reads the same).
const (
	CashoutNone        CashoutStatus = 0
	CashoutAvailable   CashoutStatus = 1
	CashoutUnavailable CashoutStatus = -1
	CashoutClosed      CashoutStatus = -2
)

// MarketMetadata is the market_metadata element of a market line, sent mostly for
// outrights. A zero time was not sent (the feed's times are milliseconds since the
// epoch, and the epoch itself decodes to 1970, not to the zero time.Time).
type MarketMetadata struct {
	NextBetstop time.Time // next_betstop: when to stop betting on the market
	StartTime   time.Time // start_time of the event the market refers to
	EndTime     time.Time // end_time of the event the market refers to
	AAMSID      int64     // aams_id: the Italian regulator's id of the outright; see HasAAMSID
	HasAAMSID   bool
}

// OddsOutcome is one outcome of a market line.
//
// Odds and Probability are meaningful only with their Has flags set: the feed leaves odds
// out for an outcome it does not price, and a probability of 0 is a value.
//
// Odds, Probability and the Additional probabilities are xs:doubles, which the schema lets
// be INF, -INF or NaN: Decode gives math.Inf(1), math.Inf(-1) or a NaN for them, never 0
// and never an error. Test with math.IsInf(v, 0) and math.IsNaN(v) before pricing: a NaN
// is unequal to everything, itself included, so o.Odds > 1 is false for it.
type OddsOutcome struct {
	ID          string  // "1", "sr:player:1234", ...
	Odds        float64 // decimal odds (odds); see HasOdds
	Probability float64 // the probabilities attribute; see HasProbability
	// Additional holds the probabilities of the outcomes of Asian lines (win, lose, half
	// win, half lose, refund); nil when the feed sent none of them, as it does for most
	// markets. It points into an array that all the outcomes of the message share.
	Additional *AdditionalProbabilities
	// Team is the team of a player outcome: 1 home, 2 away; 0 when absent (the feed has no
	// team 0).
	Team int8
	// Inactive is true for an outcome the feed marks active="0": one that cannot be bet
	// on. It is false when the attribute is absent, as the feed defines, so that an
	// outcome built by hand is active unless said otherwise.
	Inactive       bool
	HasOdds        bool
	HasProbability bool
}

// AdditionalProbabilities are an outcome's probabilities of each way a bet on an Asian
// line can end. Each is meaningful only with its Has flag set (0 is a probability).
type AdditionalProbabilities struct {
	Win         float64 // win_probabilities
	Lose        float64 // lose_probabilities
	HalfWin     float64 // half_win_probabilities
	HalfLose    float64 // half_lose_probabilities
	Refund      float64 // refund_probabilities
	HasWin      bool
	HasLose     bool
	HasHalfWin  bool
	HasHalfLose bool
	HasRefund   bool
}

// BetStop suspends markets of an event: all of them, or the groups named.
type BetStop struct {
	Header
	// Groups is "all", or market groups separated by '|'; empty when the feed left the
	// required attribute out (SchemaViolations has MissingGroups then).
	Groups string
	// MarketStatus is what the markets become: MarketSuspended when the attribute is
	// absent, as the feed defines. (A bet stop built by hand says so: the type's zero
	// value is MarketActive, a market line's default.)
	MarketStatus MarketStatus
}

// Type returns MessageBetStop.
func (*BetStop) Type() MessageType { return MessageBetStop }

// BetSettlement settles market lines of an event.
type BetSettlement struct {
	Header
	// Certainty is 1 for results scouted live, 2 for confirmed results; 0 when absent
	// (the schema requires it: SchemaViolations has MissingCertainty then; 0 is no
	// certainty level, so it cannot be mistaken for one).
	Certainty int
	Markets   []SettledMarket
}

// Type returns MessageBetSettlement.
func (*BetSettlement) Type() MessageType { return MessageBetSettlement }

// SettledMarket is one settled market line.
type SettledMarket struct {
	ID                 int
	Specifiers         Specifiers
	ExtendedSpecifiers Specifiers
	// Name is the market's name as the feed may send it; empty when absent (resolve the
	// name from the market descriptions then).
	Name string
	// VoidReason is the void_reason attribute, meaningful only with HasVoidReason set:
	// void reason 0 exists ("other").
	VoidReason    int
	HasVoidReason bool
	Result        string // the market's result attribute, such as a score; empty when absent
	Outcomes      []SettledOutcome
}

// OutcomeResult is the result of a settled outcome.
type OutcomeResult int8

// Outcome results.
const (
	ResultUndecided OutcomeResult = -1
	ResultLost      OutcomeResult = 0
	ResultWon       OutcomeResult = 1
)

// SettledOutcome is the settlement of one outcome. Its factors are the documented neutral
// values when the feed leaves them out, so that a payout computed from them is right
// whether the attribute came or not:
//
//	payout = stake * (1 - VoidFactor) * odds * DeadHeatFactor   (when Result is ResultWon)
//	       + stake * VoidFactor                                 (the refund, won or lost)
//
// The place part of an each-way bet has factors of its own (EachWayResult,
// EachWayFactor, DeadHeatFactorPlace), which the feed sends for each-way markets alone.
//
// The factors are xs:doubles: INF and NaN arrive as math.Inf and NaN; check math.IsNaN
// and math.IsInf before multiplying a stake by them.
type SettledOutcome struct {
	ID     string
	Result OutcomeResult
	// VoidFactor is the share of the stake returned: 0.5 or 1; 0 when absent, which means
	// nothing is returned.
	VoidFactor float64
	// DeadHeatFactor is the share of a winning bet's payout due after a dead heat, such as
	// 0.5 for two joint winners. Decode sets it to 1 when the attribute is absent, which
	// means no dead heat: a payout multiplied by it is unchanged. (A SettledOutcome built by
	// hand sets 1 too: its zero value would void the payout.)
	DeadHeatFactor float64
	// EachWayResult is each_way_result: "place" or "winner|place", what the outcome won
	// of an each-way bet; empty when absent.
	EachWayResult string
	// EachWayFactor is each_way_factor: the share of the odds at which the place part of
	// an each-way bet is paid, such as 0.2; meaningful only with HasEachWayFactor set.
	EachWayFactor    float64
	HasEachWayFactor bool
	// DeadHeatFactorPlace is dead_heat_factor_place: DeadHeatFactor for the place part of
	// an each-way bet; meaningful only with HasDeadHeatFactorPlace set. Absent, it means
	// no dead heat, a factor of 1. (A flag, not a neutral value as DeadHeatFactor has, so
	// that a SettledOutcome built by hand before it existed still means what it did.)
	DeadHeatFactorPlace    float64
	HasDeadHeatFactorPlace bool
}

// MarketRef names a market line in a cancellation or a rollback.
type MarketRef struct {
	ID                 int
	Specifiers         Specifiers
	ExtendedSpecifiers Specifiers
	// Name is the market's name as the feed may send it; empty when absent.
	Name string
	// VoidReason is the void_reason attribute (bet_cancel only), meaningful only with
	// HasVoidReason set: void reason 0 exists ("other").
	VoidReason    int
	HasVoidReason bool
	// Outcomes are the outcome elements the feed listed under the market: the outcomes of
	// the line that the message concerns, when it names some (an in-play settlement is
	// rolled back outcome by outcome); nil when it names none.
	Outcomes []OutcomeRef
}

// OutcomeRef names an outcome of a market line in a cancellation or a rollback.
type OutcomeRef struct {
	ID string // "1", "sr:player:1234", ...
}

// RollbackBetSettlement undoes an earlier settlement of the markets listed.
type RollbackBetSettlement struct {
	Header
	Markets []MarketRef
}

// Type returns MessageRollbackBetSettlement.
func (*RollbackBetSettlement) Type() MessageType { return MessageRollbackBetSettlement }

// BetCancel voids bets on the markets listed, placed between StartTime and EndTime when
// they are given (all bets when both are zero).
type BetCancel struct {
	Header
	StartTime    time.Time // zero when absent
	EndTime      time.Time // zero when absent
	SupercededBy URN       // the event that replaces this one; zero when absent
	Markets      []MarketRef
}

// Type returns MessageBetCancel.
func (*BetCancel) Type() MessageType { return MessageBetCancel }

// RollbackBetCancel undoes an earlier bet cancel for the markets listed.
type RollbackBetCancel struct {
	Header
	StartTime time.Time // zero when absent
	EndTime   time.Time // zero when absent
	Markets   []MarketRef
}

// Type returns MessageRollbackBetCancel.
func (*RollbackBetCancel) Type() MessageType { return MessageRollbackBetCancel }

// FixtureChange says that an event's fixture changed (new event, start time, format, ...);
// the host re-reads the fixture from the API.
type FixtureChange struct {
	Header
	// ChangeType is the change_type attribute: 1 new, 2 start time, 3 cancelled, 4 format,
	// 5 coverage, ...; 0 when absent (the feed has no change type 0).
	ChangeType int
	// StartTime is start_time; zero when absent, which the schema does not allow
	// (SchemaViolations has MissingStartTime then).
	StartTime    time.Time
	NextLiveTime time.Time // next_live_time; zero when absent
}

// Type returns MessageFixtureChange.
func (*FixtureChange) Type() MessageType { return MessageFixtureChange }

// Cashout carries the probabilities of some markets of an event, and the event's status,
// for a customer's cash-out offers: the schema's cashout element, whose status and markets
// are an odds change's. Its outcomes usually carry probabilities and no odds (HasOdds
// false). Listeners receive it through CashoutListener.
type Cashout struct {
	Header
	BettingStatus int               // odds/@betting_status; 0 when absent
	BetstopReason int               // odds/@betstop_reason; 0 when absent
	EventStatus   *SportEventStatus // sport_event_status; nil when absent
	Markets       []OddsMarket
}

// Type returns MessageCashout.
func (*Cashout) Type() MessageType { return MessageCashout }

// Alive is a producer's heartbeat. Subscribed false means the feed no longer considers this
// consumer subscribed to the producer and a recovery is due.
type Alive struct {
	Header
	Subscribed bool
}

// Type returns MessageAlive.
func (*Alive) Type() MessageType { return MessageAlive }

// SnapshotComplete ends the replay of a recovery request; Header.RequestID names it.
type SnapshotComplete struct {
	Header
}

// Type returns MessageSnapshotComplete.
func (*SnapshotComplete) Type() MessageType { return MessageSnapshotComplete }

// Specifiers is a market line's specifier list as the feed writes it: key=value pairs
// separated by '|', such as "total=2.5|hcp=1:0".
type Specifiers string

// Get returns the value of the specifier key.
func (s Specifiers) Get(key string) (string, bool) {
	for k, v := range s.All() {
		if k == key {
			return v, true
		}
	}
	return "", false
}

// All iterates over the key=value pairs in order. A pair without '=' has an empty value.
func (s Specifiers) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		rest := string(s)
		for rest != "" {
			var pair string
			pair, rest, _ = strings.Cut(rest, "|")
			k, v, _ := strings.Cut(pair, "=")
			if !yield(k, v) {
				return
			}
		}
	}
}
