package locks

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors a Store returns, wrapped with what was missing or conflicting; test them with
// errors.Is.
var (
	// ErrNotFound: the sensor, client, link or notification does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a sensor with that id is already registered.
	ErrExists = errors.New("already exists")
	// ErrConflict: the thing is not in a state that allows the operation (replaying a
	// notification that is not dead).
	ErrConflict = errors.New("conflict")
)

// MaxSensorIDLen is the longest sensor id.
const MaxSensorIDLen = 16

// Limits on the free text an operator registers.
const (
	MaxAddressLen = 500
	MaxNameLen    = 200
	MaxURLLen     = 2000
)

// FieldError is a bad value of one named field: of a reading, a sensor, a client or an
// API request.
type FieldError struct {
	Field   string // e.g. "sensor_id"
	Problem string // e.g. "must be 1 to 16 letters and digits"
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// SensorID names a lock sensor: 1 to 16 ASCII letters and digits, case-sensitive
// ("xa7v9Dfadr7H", "0xA", "TestSensor", "0123456789aBcDeF").
type SensorID string

// ParseSensorID returns s as a SensorID, or a *FieldError for "sensor_id" saying why
// it is not one.
func ParseSensorID(s string) (SensorID, error) {
	if err := checkSensorID(s); err != "" {
		return "", &FieldError{Field: "sensor_id", Problem: err}
	}
	return SensorID(s), nil
}

func checkSensorID(s string) string {
	if s == "" {
		return "missing"
	}
	if len(s) > MaxSensorIDLen {
		return fmt.Sprintf("%q is longer than %d characters", truncate(s, 40), MaxSensorIDLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return fmt.Sprintf("%q has %q: only letters and digits are allowed", s, rune(c))
		}
	}
	return ""
}

// truncate shortens s to at most n bytes for an error message, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Sensor is a registered lock sensor.
type Sensor struct {
	ID SensorID `json:"id"`
	// Address is where the sensor is installed, e.g.
	// "Moscow, Russia, Svobody st. 23 fl 1 room 16".
	Address string `json:"address"`
}

// Validate reports the first bad field of s as a *FieldError.
func (s Sensor) Validate() error {
	if _, err := ParseSensorID(string(s.ID)); err != nil {
		var fe *FieldError
		errors.As(err, &fe)
		return &FieldError{Field: "id", Problem: fe.Problem}
	}
	return checkText("address", s.Address, MaxAddressLen)
}

// ClientID identifies a client; the Store assigns it.
type ClientID int64

// Client is someone to notify about the sensors linked to them.
type Client struct {
	ID   ClientID `json:"id"`
	Name string   `json:"name"`
	// URL receives a POST for every notification.
	URL string `json:"url"`
}

// Validate reports the first bad field of c as a *FieldError. ID is not checked:
// the Store assigns it.
func (c Client) Validate() error {
	if err := checkText("name", c.Name, MaxNameLen); err != nil {
		return err
	}
	if c.URL == "" {
		return &FieldError{Field: "url", Problem: "missing"}
	}
	if len(c.URL) > MaxURLLen {
		return &FieldError{Field: "url", Problem: fmt.Sprintf("longer than %d characters", MaxURLLen)}
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &FieldError{Field: "url", Problem: fmt.Sprintf("%q is not an absolute http or https URL", truncate(c.URL, 80))}
	}
	return nil
}

func checkText(field, v string, max int) error {
	switch {
	case v == "":
		return &FieldError{Field: field, Problem: "missing"}
	case len(v) > max:
		return &FieldError{Field: field, Problem: fmt.Sprintf("longer than %d characters", max)}
	case !utf8.ValidString(v):
		return &FieldError{Field: field, Problem: "not valid UTF-8"}
	case strings.ContainsRune(v, 0):
		return &FieldError{Field: field, Problem: "contains a NUL character"}
	}
	return nil
}

// State is what a lock sensor reports: 0 or 1, as the sensor sends it.
type State uint8

// Current is what the service knows of a sensor now.
type Current struct {
	SensorID SensorID
	// Known is false until a reading has set State.
	Known bool
	State State
	// ReadingAt is the sensor's time (ts) of the latest reading applied; a reading older
	// than it is stale and changes nothing.
	ReadingAt time.Time
	// ChangedAt is the sensor's time of the reading that set State.
	ChangedAt time.Time
	// LastSeen is when the service last received a reading from the sensor (by the
	// service's clock: a sensor's clock may be wrong, silence must not be). Zero until
	// the first reading.
	LastSeen time.Time
	// Lost is true from when the sensor was found silent until its next reading.
	Lost bool
	// Sequence is the sequence of the sensor's latest event (changed, lost or
	// restored), 0 before the first: the number its latest notification carries. The
	// Store assigns it (see Effects.Notify); the States an Update writes leave it as it is.
	Sequence int64
}

// currentJSON is Current on the wire: state is null until known.
type currentJSON struct {
	SensorID  SensorID   `json:"sensor_id"`
	State     *State     `json:"state"`
	ReadingAt *time.Time `json:"reading_at,omitempty"`
	ChangedAt *time.Time `json:"changed_at,omitempty"`
	LastSeen  *time.Time `json:"last_seen,omitempty"`
	Lost      bool       `json:"lost"`
	Sequence  int64      `json:"sequence"`
}

// MarshalJSON encodes c with "state" null until a reading has set it.
func (c Current) MarshalJSON() ([]byte, error) {
	w := currentJSON{SensorID: c.SensorID, Lost: c.Lost, Sequence: c.Sequence,
		ReadingAt: timeOrNil(c.ReadingAt), ChangedAt: timeOrNil(c.ChangedAt), LastSeen: timeOrNil(c.LastSeen)}
	if c.Known {
		w.State = &c.State
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (c *Current) UnmarshalJSON(b []byte) error {
	var w currentJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Current{SensorID: w.SensorID, Lost: w.Lost, Sequence: w.Sequence}
	if w.State != nil {
		c.Known, c.State = true, *w.State
	}
	for _, p := range []struct {
		dst *time.Time
		src *time.Time
	}{{&c.ReadingAt, w.ReadingAt}, {&c.ChangedAt, w.ChangedAt}, {&c.LastSeen, w.LastSeen}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	return nil
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Outcome is what a reading did to its sensor's state.
type Outcome string

// Outcomes of a reading.
const (
	// Changed: the reading set a new state (or the first one).
	Changed Outcome = "changed"
	// Same: the reading repeated the state; nobody is notified.
	Same Outcome = "same"
	// Stale: the reading is older (by its ts) than one already applied; it is kept in the
	// history and changes nothing.
	Stale Outcome = "stale"
)

// StoredReading is a reading in a sensor's history.
type StoredReading struct {
	ID       int64     `json:"id"` // assigned by the Store, increasing
	SensorID SensorID  `json:"sensor_id"`
	State    State     `json:"state"`
	At       time.Time `json:"ts"`          // the sensor's time
	Received time.Time `json:"received_at"` // the service's time
	Outcome  Outcome   `json:"outcome"`
}

// DeadLetter is a reading that was refused, with why.
type DeadLetter struct {
	ID       int64     `json:"id"` // assigned by the Store, increasing
	Raw      []byte    `json:"-"`  // the message exactly as received
	Reason   string    `json:"reason"`
	Received time.Time `json:"received_at"`
}

// MarshalJSON encodes d with the raw message as "raw" when it is UTF-8 text, or as
// "raw_base64" when it is not, so no byte is lost either way.
func (d DeadLetter) MarshalJSON() ([]byte, error) {
	type plain DeadLetter
	w := struct {
		plain
		Raw       *string `json:"raw,omitempty"`
		RawBase64 []byte  `json:"raw_base64,omitempty"`
	}{plain: plain(d)}
	if utf8.Valid(d.Raw) {
		s := string(d.Raw)
		w.Raw = &s
	} else {
		w.RawBase64 = d.Raw
	}
	return json.Marshal(w)
}

// Event is what a notification tells a client.
type Event string

// Events.
const (
	EventChanged  Event = "changed"  // the lock's state changed
	EventLost     Event = "lost"     // the sensor has been silent past the liveness timeout
	EventRestored Event = "restored" // a lost sensor sent a reading again
)

// NotificationID identifies a notification; the Store assigns it, increasing.
type NotificationID int64

// Status is where a notification is in its life.
type Status string

// Statuses of a notification.
const (
	Pending   Status = "pending"   // to be attempted (again) at NextAttempt
	Delivered Status = "delivered" // the client answered 2xx
	Dead      Status = "dead"      // every attempt failed; Replay makes it pending again
	Cancelled Status = "cancelled" // superseded by a newer change, or the client was unlinked
)

// Notification is one event to deliver to one client, with its delivery state.
type Notification struct {
	ID       NotificationID `json:"id"`
	SensorID SensorID       `json:"sensor_id"`
	ClientID ClientID       `json:"client_id"`
	Event    Event          `json:"event"`
	// State is the sensor's state the event reports: the new one for changed, the last
	// known for lost and restored.
	State State `json:"state"`
	// At is when the event happened: the reading's ts for changed, when the silence was
	// found for lost, when the reading was received for restored.
	At time.Time `json:"time"`
	// ReadingAt is the sensor's own time (ts) of the reading the event is about: the
	// reading that set State for changed, the last one applied before the silence for
	// lost, the one that ended the silence for restored.
	ReadingAt time.Time `json:"reading_at,omitzero"`
	// Sequence orders the events of the sensor: it is 1 for the sensor's first event and
	// one more for each next one, changed, lost and restored alike, assigned by the
	// Store in the write that records the event. Every client notified of one event gets
	// the same Sequence, and every attempt the same as the first.
	Sequence int64     `json:"sequence"`
	Created  time.Time `json:"created_at"`
	Status   Status    `json:"status"`
	// Attempts is how many attempts have been started.
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"next_attempt_at"`
	// Reason says why the notification is dead or cancelled; LastError, what the last
	// failed attempt met.
	Reason    string `json:"reason,omitempty"`
	LastError string `json:"last_error,omitempty"`
	// Finished is when it was delivered, cancelled or given up; zero while pending.
	Finished time.Time `json:"finished_at,omitzero"`
	// History holds the attempts, oldest first, where a query asks for them.
	History []Attempt `json:"history,omitempty"`
}

// Attempt is one try to deliver a notification.
type Attempt struct {
	Notification NotificationID `json:"notification_id"`
	N            int            `json:"n"` // 1 for the first attempt
	At           time.Time      `json:"at"`
	Duration     time.Duration  `json:"duration_ns"`
	StatusCode   int            `json:"status_code,omitempty"` // 0 when no answer came
	Error        string         `json:"error,omitempty"`       // "" when delivered
}

// Delivered reports whether the attempt delivered the notification.
func (a Attempt) Delivered() bool { return a.Error == "" }
