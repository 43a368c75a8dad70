package feed

import (
	"iter"
	"strconv"
	"strings"
	"time"
)

// Message is a decoded feed message: one of *OddsChange, *BetStop, *BetSettlement,
// *RollbackBetSettlement, *BetCancel, *RollbackBetCancel, *FixtureChange, *Alive and
// *SnapshotComplete.
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
	ChangeReason  int               // odds_change_reason; 0 when absent (a normal update)
	BettingStatus int               // odds/@betting_status; 0 when absent
	BetstopReason int               // odds/@betstop_reason; 0 when absent
	EventStatus   *SportEventStatus // sport_event_status; nil when absent
	Markets       []OddsMarket
}

// Type returns MessageOddsChange.
func (*OddsChange) Type() MessageType { return MessageOddsChange }

// SportEventStatus is the state of play that accompanies an odds change.
type SportEventStatus struct {
	Status       int     // 0 not started, 1 live, 2 suspended, 3 ended, 4 closed, ...
	Reporting    int     // reporting; 0 when absent
	MatchStatus  int     // match_status: the sport-specific phase code
	HomeScore    float64 // home_score
	AwayScore    float64 // away_score
	Clock        EventClock
	PeriodScores []PeriodScore
}

// EventClock is the match clock of a live event; its fields are empty when absent.
type EventClock struct {
	MatchTime     string // such as "75:02"
	StoppageTime  string
	RemainingTime string
	Stopped       bool
}

// PeriodScore is the score of one period of an event.
type PeriodScore struct {
	Number          int
	MatchStatusCode int
	HomeScore       float64
	AwayScore       float64
}

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
	Outcomes           []OddsOutcome
}

// OddsOutcome is one outcome of a market line.
type OddsOutcome struct {
	ID          string  // "1", "sr:player:1234", ...
	Odds        float64 // decimal odds; 0 when absent
	Probability float64 // the probabilities attribute; 0 when absent
	// Inactive is true for an outcome the feed marks active="0": one that cannot be bet
	// on. It is false when the attribute is absent, as the feed defines, so that an
	// outcome built by hand is active unless said otherwise.
	Inactive bool
}

// BetStop suspends markets of an event: all of them, or the groups named.
type BetStop struct {
	Header
	Groups string // "all", or market groups separated by '|'
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
	Certainty int // 1 live scouted, 2 confirmed results
	Markets   []SettledMarket
}

// Type returns MessageBetSettlement.
func (*BetSettlement) Type() MessageType { return MessageBetSettlement }

// SettledMarket is one settled market line.
type SettledMarket struct {
	ID                 int
	Specifiers         Specifiers
	ExtendedSpecifiers Specifiers
	VoidReason         int // void_reason; 0 when absent
	Outcomes           []SettledOutcome
}

// OutcomeResult is the result of a settled outcome.
type OutcomeResult int8

// Outcome results.
const (
	ResultUndecided OutcomeResult = -1
	ResultLost      OutcomeResult = 0
	ResultWon       OutcomeResult = 1
)

// SettledOutcome is the settlement of one outcome.
type SettledOutcome struct {
	ID             string
	Result         OutcomeResult
	VoidFactor     float64 // share of the stake returned: 0 (none, or absent), 0.5 or 1
	DeadHeatFactor float64 // 0 when absent, which means no dead heat
}

// MarketRef names a market line in a cancellation or a rollback.
type MarketRef struct {
	ID                 int
	Specifiers         Specifiers
	ExtendedSpecifiers Specifiers
	VoidReason         int // void_reason, in bet_cancel only; 0 when absent
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
	ChangeType   int       // change_type: 1 new, 2 start time, 3 cancelled, 4 format, 5 coverage, ...; 0 when absent
	StartTime    time.Time // start_time; zero when absent
	NextLiveTime time.Time // next_live_time; zero when absent
}

// Type returns MessageFixtureChange.
func (*FixtureChange) Type() MessageType { return MessageFixtureChange }

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
