package markets

import (
	"errors"
	"fmt"
	"strings"

	"github.com/feedkit/feedkit/feed"
)

// Template is a compiled market or outcome name template, such as
// "{!periodnr} period - {$competitor1} total" or "{$competitor1} ({+hcp})". Compile it once
// with ParseTemplate and render it for each market line; a Template is immutable and safe
// for concurrent use.
//
// Text outside braces is literal. An expression in braces takes one of these forms, as
// Sportradar's Java and .NET SDKs read them (their NameExpressionHelper, OperandFactory and
// *NameExpression classes):
//
//	{X}         the specifier X's text as sent, untouched: total=2.50 renders "2.50"
//	{+X}        X as a signed decimal: "+1.5", "-0.25", and "0" for any zero ("0", "-0", "0.0")
//	{-X}        X negated, signed the same way: hcp=-1.5 renders "+1.5"
//	{!X}        X as an ordinal: 1st 2nd 3rd 4th 11th 12th 13th 21st 101st 111th; in
//	            French (RenderIn) 1er 2e 3e 11e 21e
//	{(X+c)}     arithmetic with an unsigned integer constant c: {(X-c)}, {(c+X)}, {(c-X)};
//	            it also follows +, - and !: {+(X+c)}, {!(inningnr+1)}
//	{$competitor1}, {$competitor2}, {$event}
//	            names from the event, asked of Entities
//	{%X}        the name of the player or competitor whose URN the specifier X holds, as in
//	            {%player}, {%competitor} or {%server}, asked of Entities.Profile
//
// Specifier names are ASCII letters, digits and '_'. A malformed template fails at
// ParseTemplate; a specifier or entity that is missing or unfit fails at Render. Neither
// panics, and neither renders a name it is not sure of.
//
// Where the two SDKs differ, this package decides as follows:
//
//   - Numbers in {+X} and {-X} keep the digits sent, as .NET's decimal does
//     (SdkInfo.DecimalToStringWithSign): hcp=1 renders "+1" and hcp=1.50 renders "+1.50".
//     Java parses a double (SdkHelper.doubleToStringWithSign), so it renders "+1.0" and
//     "+1.5". Leading zeros of the integer part are dropped in both ("007" renders "+7").
//     A number is [+-]digits[.digits]; exponents, "NaN" and ".5" are refused.
//   - Constant-first arithmetic, {(1+X)} and {(10-X)}, is read as .NET reads it
//     (ExpressionOperand's specifierIsFirst): 1+X and 10-X. Java takes "1" for the
//     specifier's name and fails.
//   - {(X+c)} without an operator needs an integer X, as in both SDKs (Java's
//     ExpressionOperand.getStringValue throws UnsupportedOperationException for 2.1,
//     .NET's GetStringValue goes through GetIntValue); {+(X+c)} and {-(X+c)} take a
//     decimal and keep its digits after the point (hcp=0.50: {+(hcp+1)} renders "+1.50").
//   - Integers are 32-bit, as in both SDKs; where they would wrap around on overflow,
//     Render returns an error.
//   - Ordinals are English in every language but French, and never grouped: 1000th.
//     .NET's Humanizer writes English in every language (int.Ordinalize(), which ignores
//     the language asked for); Java's ICU RuleBasedNumberFormat writes them per language
//     ("1,000th" in English, "1er", "2e" in French). French names asked for with
//     RenderIn take ICU's French: 1er, then Ne (2e, 11e, 1000e), the masculine form, as
//     market names ("1er but", "2e set") use it. Other languages get English, as
//     .NET gives: their ordinal forms depend on gender and case that a template does not
//     carry.
//     A negative ordinal is an error: Humanizer writes "-1th" and ICU "−1st", and neither
//     is a name.
//   - {$event}: see Entities.Event.
//   - A specifier sent with an empty value, or an entity with an empty name, is an error
//     rather than an empty part of a name (Java throws for an empty entity name too).
type Template struct {
	src   string
	parts []part
	needs EntityNeeds
}

// EntityNeeds says which Entities methods a template calls, so that a resolver can skip
// fetching what no template needs (an event summary, a player profile).
type EntityNeeds uint8

const (
	// NeedsCompetitors marks {$competitor1} and {$competitor2}: Entities.Competitor.
	NeedsCompetitors EntityNeeds = 1 << iota
	// NeedsEvent marks {$event}: Entities.Event.
	NeedsEvent
	// NeedsProfiles marks {%player}, {%competitor} and the like: Entities.Profile.
	NeedsProfiles
)

// Entities supplies the names a template takes from outside its specifiers, in the
// language the caller renders in.
type Entities interface {
	// Competitor returns the name of the event's competitor n: 1 home, 2 away.
	Competitor(n int) (string, error)
	// Event returns the event's name as {$event} renders it. For a match this is
	// MatchEventName of its two competitors in the language asked for, as the .NET SDK
	// builds it (EntityNameExpression.BuildEventNameAsync); for other events, the name the
	// Sports API gives. The Java SDK instead takes the event's English name whatever the
	// language (SportEventNameExpression: sportEvent.getName(Locale.ENGLISH)).
	Event() (string, error)
	// Profile returns the name of the player or competitor the URN names ({%player},
	// {%competitor}, and outcome ids that are URNs).
	Profile(urn feed.URN) (string, error)
}

// MatchEventName is a match's name as {$event} renders it: "home vs away" (see
// Entities.Event).
func MatchEventName(home, away string) string { return home + " vs " + away }

// Errors a TemplateError wraps, for errors.Is.
var (
	// ErrTemplateSyntax: the template is malformed.
	ErrTemplateSyntax = errors.New("malformed template")
	// ErrSpecifierMissing: the market line lacks a specifier the template uses.
	ErrSpecifierMissing = errors.New("specifier missing")
	// ErrSpecifierValue: a specifier's value does not fit the expression, such as a
	// decimal where an ordinal needs an integer, or a value that is not a URN for {%player}.
	ErrSpecifierValue = errors.New("specifier value unfit")
	// ErrNoEntities: the template needs Entities and Render was given nil.
	ErrNoEntities = errors.New("template needs entities and none were given")
	// ErrEmptyName: Entities returned an empty name without an error.
	ErrEmptyName = errors.New("empty name")
)

// TemplateError reports a template that cannot be parsed or rendered. Its message names the
// template, the expression or byte offset, and the specifier concerned.
type TemplateError struct {
	Template   string // the template's source
	Offset     int    // byte offset in Template of the expression or syntax error
	Expression string // the expression concerned, such as "{+hcp}"; empty for a syntax error
	Specifier  string // the specifier concerned; empty when none
	Err        error  // wraps one of the Err* variables above, or an Entities error
}

func (e *TemplateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "markets: template %q", e.Template)
	if e.Expression == "" {
		fmt.Fprintf(&b, " at byte %d", e.Offset)
	} else {
		fmt.Fprintf(&b, ": %s", e.Expression)
	}
	if e.Specifier != "" {
		fmt.Fprintf(&b, ": specifier %q", e.Specifier)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *TemplateError) Unwrap() error { return e.Err }

// String returns the template's source.
func (t *Template) String() string { return t.src }

// Needs reports which Entities methods Render calls for this template.
func (t *Template) Needs() EntityNeeds { return t.needs }

// NeedsEntities reports whether Render needs a non-nil Entities.
func (t *Template) NeedsEntities() bool { return t.needs != 0 }

// Render renders the template with a market line's specifiers and, for the expressions
// that need them, ent, which may be nil for a template that needs no entity. Ordinals
// are English: RenderIn renders them in the language of the names. It allocates only the
// returned string for a name of up to 128 bytes whose entity names do not allocate.
func (t *Template) Render(specs feed.Specifiers, ent Entities) (string, error) {
	return t.render(english, specs, ent)
}

// RenderIn renders the template as Render does, its ordinals in lang (an ISO 639-1 code,
// as the Sports API's languages): French for "fr", English for every other.
func (t *Template) RenderIn(lang string, specs feed.Specifiers, ent Entities) (string, error) {
	return t.render(ordinalsOf(lang), specs, ent)
}

func (t *Template) render(ord ordinals, specs feed.Specifiers, ent Entities) (string, error) {
	if len(t.parts) == 1 && t.parts[0].kind == kindLiteral {
		return t.parts[0].text, nil
	}
	var buf [128]byte
	b := buf[:0]
	for i := range t.parts {
		p := &t.parts[i]
		var err error
		b, err = p.render(b, ord, specs, ent)
		if err != nil {
			return "", t.renderError(p, err)
		}
	}
	return string(b), nil
}

func (t *Template) renderError(p *part, err error) error {
	e := &TemplateError{Template: t.src, Offset: p.off, Expression: t.src[p.off:p.end], Err: err}
	if p.kind.usesSpecifier() {
		e.Specifier = p.text
	}
	return e
}

type kind uint8

const (
	kindLiteral    kind = iota
	kindCardinal        // {X}, {(X+c)}
	kindPlus            // {+X}, {+(X+c)}
	kindMinus           // {-X}, {-(X+c)}
	kindOrdinal         // {!X}, {!(X+c)}
	kindCompetitor      // {$competitor1}, {$competitor2}
	kindEvent           // {$event}
	kindProfile         // {%X}
)

func (k kind) usesSpecifier() bool {
	return k == kindCardinal || k == kindPlus || k == kindMinus || k == kindOrdinal || k == kindProfile
}

// part is a literal run of text or one expression.
type part struct {
	kind kind
	// text is the literal text, or the specifier's name.
	text string
	// arith marks an operand (X+c), (X-c), (c+X) or (c-X): the value is
	// sign*X + c where X is the specifier's value.
	arith bool
	neg   bool  // sign is -1: (c-X)
	c     int64 // the constant, negated for (X-c)
	n     int   // the competitor's number
	// off and end delimit the expression in the template's source, braces included.
	off, end int
}

func (p *part) render(b []byte, ord ordinals, specs feed.Specifiers, ent Entities) ([]byte, error) {
	switch p.kind {
	case kindLiteral:
		return append(b, p.text...), nil
	case kindCompetitor:
		if ent == nil {
			return b, ErrNoEntities
		}
		name, err := ent.Competitor(p.n)
		return appendName(b, name, err)
	case kindEvent:
		if ent == nil {
			return b, ErrNoEntities
		}
		name, err := ent.Event()
		return appendName(b, name, err)
	}
	v, ok := specs.Get(p.text)
	if !ok {
		return b, ErrSpecifierMissing
	}
	if v == "" {
		return b, fmt.Errorf("%w: empty", ErrSpecifierValue)
	}
	switch p.kind {
	case kindCardinal:
		if !p.arith {
			return append(b, v...), nil
		}
		n, err := p.integer(v)
		if err != nil {
			return b, err
		}
		return appendInt(b, n), nil
	case kindOrdinal:
		n, err := p.integer(v)
		if err != nil {
			return b, err
		}
		if n < 0 {
			return b, fmt.Errorf("%w: ordinal of negative number %d", ErrSpecifierValue, n)
		}
		return ord.append(b, n), nil
	case kindPlus, kindMinus:
		d, err := parseDecimal(v)
		if err != nil {
			return b, fmt.Errorf("%w: %q: %v", ErrSpecifierValue, v, err)
		}
		if !p.arith {
			return d.appendSigned(b, p.kind == kindMinus), nil
		}
		f, err := d.affine(p.neg, p.c)
		if err != nil {
			return b, fmt.Errorf("%w: %q: %v", ErrSpecifierValue, v, err)
		}
		return f.appendSigned(b, p.kind == kindMinus), nil
	case kindProfile:
		if ent == nil {
			return b, ErrNoEntities
		}
		urn, err := feed.ParseURN(v)
		if err != nil {
			return b, fmt.Errorf("%w: %q is not a URN", ErrSpecifierValue, v)
		}
		name, err := ent.Profile(urn)
		return appendName(b, name, err)
	}
	return b, fmt.Errorf("unknown expression kind %d", p.kind) // ParseTemplate makes none
}

// integer returns the specifier's value v as a 32-bit integer, with the part's arithmetic
// applied.
func (p *part) integer(v string) (int64, error) {
	n, err := parseInt32(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not an integer", ErrSpecifierValue, v)
	}
	if !p.arith {
		return n, nil
	}
	if p.neg {
		n = -n
	}
	n += p.c // both within 32 bits: no int64 overflow
	if n < minInt32 || n > maxInt32 {
		return 0, fmt.Errorf("%w: %q: the result %d overflows a 32-bit integer", ErrSpecifierValue, v, n)
	}
	return n, nil
}

func appendName(b []byte, name string, err error) ([]byte, error) {
	if err != nil {
		return b, err
	}
	if name == "" {
		return b, ErrEmptyName
	}
	return append(b, name...), nil
}
