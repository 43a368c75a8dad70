package carousel

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Type is the kind of a cycle: how it chooses what to republish and how fast.
type Type string

const (
	// ThrottledWholeCollection republishes every item of a collection, one per Throttle,
	// over and over.
	ThrottledWholeCollection Type = "ThrottledWholeCollection"
	// FixedWindow republishes the items modified in the last TimeWindow, spread evenly
	// over TimeWindow but never faster than MinimumThrottle; when the minimum makes an
	// iteration overrun TimeWindow, the next window reaches back by the overrun.
	FixedWindow Type = "FixedWindow"
	// ScalingWindow republishes the items modified since the previous window ended,
	// spread over TimeWindow with the throttle kept within [MinimumThrottle,
	// MaximumThrottle].
	ScalingWindow Type = "ScalingWindow"
)

// Windowed reports whether cycles of type t republish a time window rather than a whole
// collection.
func (t Type) Windowed() bool { return t == FixedWindow || t == ScalingWindow }

func (t Type) valid() bool { return t == ThrottledWholeCollection || t.Windowed() }

// ErrInvalidConfig is wrapped by every error about a cycle's configuration; the error's
// message names the field.
var ErrInvalidConfig = errors.New("invalid cycle config")

// FieldError is one field of a configuration that cannot be used. Errors returned by
// Validate and by the config parsers join one FieldError per problem, so that an operator
// fixes a file in one pass.
type FieldError struct {
	// Field is the path of the field, e.g. "cycles[2].throttle".
	Field string
	// Value is the value found, as text; empty when the field is missing.
	Value string
	// Problem says what is wrong, e.g. "is required" or "must be positive".
	Problem string
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s %s", e.Field, e.Problem)
	}
	return fmt.Sprintf("%s %q %s", e.Field, e.Value, e.Problem)
}

// Unwrap makes every FieldError match ErrInvalidConfig.
func (e *FieldError) Unwrap() error { return ErrInvalidConfig }

// CycleConfig configures one cycle. Its fields are those of the config file (ParseConfig),
// which are the Financial Times' publish-carousel's.
type CycleConfig struct {
	// Name names the cycle and is its id: 1 to 64 letters, digits, '-', '_' or '.',
	// starting with a letter or digit, so that it can stand in a URL path.
	Name string
	// Type is the cycle's type.
	Type Type
	// Origin is the origin system the publisher announces (e.g. an HTTP header).
	Origin string
	// Collection is the collection the Source lists items of.
	Collection string
	// CoolDown is the wait before the next iteration when an iteration found nothing to
	// publish. Required for every type, as in publish-carousel's config files.
	CoolDown time.Duration
	// Throttle is the interval between two publishes of a ThrottledWholeCollection cycle.
	Throttle time.Duration
	// TimeWindow is the period a windowed cycle republishes, and the time it spreads an
	// iteration over.
	TimeWindow time.Duration
	// MinimumThrottle is the shortest interval between two publishes of a windowed cycle.
	MinimumThrottle time.Duration
	// MaximumThrottle is the longest interval between two publishes of a ScalingWindow
	// cycle.
	MaximumThrottle time.Duration
}

// ID returns the cycle's id, its Name.
func (c CycleConfig) ID() string { return c.Name }

// Validate reports every field of c that cannot be used, as FieldErrors joined, each
// wrapping ErrInvalidConfig; nil when c is usable. Field names are the YAML ones.
func (c CycleConfig) Validate() error { return c.validate("") }

// validate is Validate with the field paths prefixed by path (e.g. "cycles[2].").
func (c CycleConfig) validate(path string) error {
	var errs []error
	bad := func(field, value, problem string) {
		errs = append(errs, &FieldError{Field: path + field, Value: value, Problem: problem})
	}
	switch {
	case c.Name == "":
		bad("name", "", "is required")
	case !validName(c.Name):
		bad("name", c.Name, "must be 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit")
	}
	switch {
	case c.Type == "":
		bad("type", "", "is required")
	case !c.Type.valid():
		bad("type", string(c.Type), fmt.Sprintf("must be %s, %s or %s", ThrottledWholeCollection, FixedWindow, ScalingWindow))
	}
	if strings.TrimSpace(c.Origin) == "" {
		bad("origin", "", "is required")
	}
	if strings.TrimSpace(c.Collection) == "" {
		bad("collection", "", "is required")
	}
	positive := func(field string, d time.Duration) {
		switch {
		case d == 0:
			bad(field, "", "is required")
		case d < 0:
			bad(field, d.String(), "must be positive")
		}
	}
	positive("coolDown", c.CoolDown)
	switch c.Type {
	case ThrottledWholeCollection:
		positive("throttle", c.Throttle)
	case FixedWindow, ScalingWindow:
		positive("timeWindow", c.TimeWindow)
		positive("minimumThrottle", c.MinimumThrottle)
		if c.Type == ScalingWindow {
			positive("maximumThrottle", c.MaximumThrottle)
			if c.MaximumThrottle > 0 && c.MinimumThrottle > 0 && c.MaximumThrottle < c.MinimumThrottle {
				bad("maximumThrottle", c.MaximumThrottle.String(), fmt.Sprintf("must be at least minimumThrottle (%v)", c.MinimumThrottle))
			}
		}
	}
	return errors.Join(errs...)
}

func validName(s string) bool {
	// A letter or digit first: "." and ".." would be path segments a URL cannot address.
	if len(s) == 0 || len(s) > 64 || !isAlnum(s[0]) {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// compatible reports whether progress recorded under old can be resumed under c: the
// same type, collection and window. A changed throttle, origin or cool-down keeps the
// progress; anything that changes which items an iteration lists does not.
func (c CycleConfig) compatible(old CycleConfig) bool {
	if c.Name != old.Name || c.Type != old.Type || c.Collection != old.Collection {
		return false
	}
	return !c.Type.Windowed() || c.TimeWindow == old.TimeWindow
}

// wireCycle is a CycleConfig as it is written in YAML and JSON: durations as Go duration
// strings ("90s", "1h30m").
type wireCycle struct {
	Name            string `json:"name" yaml:"name"`
	Type            string `json:"type" yaml:"type"`
	Origin          string `json:"origin" yaml:"origin"`
	Collection      string `json:"collection" yaml:"collection"`
	CoolDown        string `json:"coolDown,omitempty" yaml:"coolDown"`
	Throttle        string `json:"throttle,omitempty" yaml:"throttle"`
	TimeWindow      string `json:"timeWindow,omitempty" yaml:"timeWindow"`
	MinimumThrottle string `json:"minimumThrottle,omitempty" yaml:"minimumThrottle"`
	MaximumThrottle string `json:"maximumThrottle,omitempty" yaml:"maximumThrottle"`
}

func toWire(c CycleConfig) wireCycle {
	d := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	return wireCycle{Name: c.Name, Type: string(c.Type), Origin: c.Origin, Collection: c.Collection,
		CoolDown: d(c.CoolDown), Throttle: d(c.Throttle), TimeWindow: d(c.TimeWindow),
		MinimumThrottle: d(c.MinimumThrottle), MaximumThrottle: d(c.MaximumThrottle)}
}

// config converts w, reporting every duration that does not parse and then every field
// Validate refuses, with paths prefixed by path.
func (w wireCycle) config(path string) (CycleConfig, error) {
	c, err := w.parse(path)
	if err != nil {
		// Validate would repeat the unparsable durations as negative; report the rest only.
		errs := joinedErrors(err)
		for _, e := range joinedErrors(c.validate(path)) {
			var fe *FieldError
			if errors.As(e, &fe) && isUnparsed(fe, errs) {
				continue
			}
			errs = append(errs, e)
		}
		return CycleConfig{}, errors.Join(errs...)
	}
	if err := c.validate(path); err != nil {
		return CycleConfig{}, err
	}
	return c, nil
}

// parse converts w without validating it, failing only on durations that do not parse
// (which it leaves at -1 in the result, and names with path prefixed). Saved metadata is
// read this way: a config refused by today's rules must not make progress unreadable.
func (w wireCycle) parse(path string) (CycleConfig, error) {
	c := CycleConfig{Name: w.Name, Type: Type(w.Type), Origin: w.Origin, Collection: w.Collection}
	var errs []error
	parse := func(field, s string, dst *time.Duration) {
		if s == "" {
			return
		}
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, &FieldError{Field: path + field, Value: s, Problem: "is not a duration (e.g. 90s, 15m, 1h)"})
			*dst = -1
			return
		}
		*dst = d
	}
	parse("coolDown", w.CoolDown, &c.CoolDown)
	parse("throttle", w.Throttle, &c.Throttle)
	parse("timeWindow", w.TimeWindow, &c.TimeWindow)
	parse("minimumThrottle", w.MinimumThrottle, &c.MinimumThrottle)
	parse("maximumThrottle", w.MaximumThrottle, &c.MaximumThrottle)
	return c, errors.Join(errs...)
}

func isUnparsed(fe *FieldError, parseErrs []error) bool {
	for _, e := range parseErrs {
		if p, ok := e.(*FieldError); ok && p.Field == fe.Field {
			return true
		}
	}
	return false
}

func joinedErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// MarshalJSON writes c with the YAML field names and durations as strings.
func (c CycleConfig) MarshalJSON() ([]byte, error) { return json.Marshal(toWire(c)) }

// UnmarshalJSON reads what MarshalJSON writes, refusing unknown fields and every field
// Validate refuses, each named.
func (c *CycleConfig) UnmarshalJSON(b []byte) error {
	var w wireCycle
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	cfg, err := w.config("")
	if err != nil {
		return err
	}
	*c = cfg
	return nil
}
