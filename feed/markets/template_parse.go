package markets

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseTemplate compiles a name template (see Template). A malformed template, such as one
// with an unmatched '{' or '}', an empty "{}", an unknown operator, an unknown entity or a
// bad constant, gives a *TemplateError wrapping ErrTemplateSyntax with the byte offset.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{src: s}
	lit := 0 // start of the pending literal text
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], "{}")
		if j < 0 {
			break
		}
		i += j
		if s[i] == '}' {
			return nil, syntaxError(s, i, "'}' without '{'")
		}
		k := strings.IndexAny(s[i+1:], "{}")
		if k < 0 {
			return nil, syntaxError(s, i, "'{' without '}'")
		}
		end := i + 1 + k
		if s[end] == '{' {
			return nil, syntaxError(s, end, "'{' inside an expression")
		}
		if lit < i {
			t.parts = append(t.parts, part{kind: kindLiteral, text: s[lit:i], off: lit, end: i})
		}
		p, err := parseExpression(s, i, end+1)
		if err != nil {
			return nil, err
		}
		t.parts = append(t.parts, p)
		switch p.kind {
		case kindCompetitor:
			t.needs |= NeedsCompetitors
		case kindEvent:
			t.needs |= NeedsEvent
		case kindProfile:
			t.needs |= NeedsProfiles
		}
		i = end + 1
		lit = i
	}
	if lit < len(s) || len(t.parts) == 0 {
		t.parts = append(t.parts, part{kind: kindLiteral, text: s[lit:], off: lit, end: len(s)})
	}
	return t, nil
}

// parseExpression parses the expression s[off:end], braces included.
func parseExpression(s string, off, end int) (part, error) {
	body := s[off+1 : end-1]
	p := part{off: off, end: end}
	if body == "" {
		return p, syntaxError(s, off, "empty expression {}")
	}
	operand := body[1:]
	switch body[0] {
	case '+':
		p.kind = kindPlus
	case '-':
		p.kind = kindMinus
	case '!':
		p.kind = kindOrdinal
	case '$':
		switch operand {
		case "competitor1":
			p.kind, p.n = kindCompetitor, 1
		case "competitor2":
			p.kind, p.n = kindCompetitor, 2
		case "event":
			p.kind = kindEvent
		default:
			return p, syntaxError(s, off, fmt.Sprintf("unknown entity %q in %s: want competitor1, competitor2 or event", operand, s[off:end]))
		}
		return p, nil
	case '%':
		p.kind = kindProfile
		if !isName(operand) {
			return p, syntaxError(s, off, fmt.Sprintf("%s: want a specifier name after '%%'", s[off:end]))
		}
		p.text = operand
		return p, nil
	default:
		if c := body[0]; !isNameByte(c) && c != '(' {
			return p, syntaxError(s, off, fmt.Sprintf("unknown operator %q in %s", c, s[off:end]))
		}
		p.kind = kindCardinal
		operand = body
	}
	if operand == "" {
		return p, syntaxError(s, off, fmt.Sprintf("%s: operator without operand", s[off:end]))
	}
	if operand[0] != '(' {
		if !isName(operand) {
			return p, syntaxError(s, off, fmt.Sprintf("%s: %q is not a specifier name (letters, digits, '_') nor (name+constant)", s[off:end], operand))
		}
		p.text = operand
		return p, nil
	}
	if len(operand) < 2 || operand[len(operand)-1] != ')' {
		return p, syntaxError(s, off, fmt.Sprintf("%s: '(' without ')'", s[off:end]))
	}
	return parseArithmetic(s, p, operand[1:len(operand)-1])
}

// parseArithmetic parses the inside of (X+c), (X-c), (c+X) or (c-X) into p.
func parseArithmetic(s string, p part, inner string) (part, error) {
	expr := s[p.off:p.end]
	op := strings.IndexAny(inner, "+-")
	if op < 0 || strings.ContainsAny(inner[op+1:], "+-") {
		return p, syntaxError(s, p.off, fmt.Sprintf("%s: want one '+' or '-' in (name+constant) or (constant+name)", expr))
	}
	left, right := inner[:op], inner[op+1:]
	p.arith = true
	var constant string
	switch {
	case isName(left) && !isDigits(left) && isDigits(right):
		p.text, constant = left, right
	case isDigits(left) && isName(right) && !isDigits(right):
		p.text, constant = right, left
		p.neg = inner[op] == '-' // c-X
	default:
		return p, syntaxError(s, p.off, fmt.Sprintf("%s: want (name+constant) or (constant+name) with an unsigned integer constant", expr))
	}
	c, err := strconv.ParseInt(constant, 10, 32)
	if err != nil {
		return p, syntaxError(s, p.off, fmt.Sprintf("%s: constant %s is not a 32-bit integer", expr, constant))
	}
	if inner[op] == '-' && !p.neg {
		c = -c // X-c
	}
	p.c = c
	return p, nil
}

func syntaxError(s string, off int, msg string) error {
	return &TemplateError{Template: s, Offset: off, Err: fmt.Errorf("%w: %s", ErrTemplateSyntax, msg)}
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
