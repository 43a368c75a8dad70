// Package topic matches routing keys against AMQP topic-exchange binding patterns: words
// separated by '.', where '*' matches exactly one word and '#' zero or more words.
package topic

import "strings"

// Pattern is a compiled binding pattern.
type Pattern struct {
	words []string
	text  string
}

// Compile splits a binding pattern into words. Runs of '#' collapse into one, which
// matches the same keys and keeps matching linear for the patterns a session binds.
func Compile(pattern string) Pattern {
	var words []string
	for _, w := range strings.Split(pattern, ".") {
		if w == "#" && len(words) > 0 && words[len(words)-1] == "#" {
			continue
		}
		words = append(words, w)
	}
	return Pattern{words: words, text: pattern}
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.text }

// Match reports whether the routing key matches the pattern, as RabbitMQ's topic exchange
// decides it for keys of non-empty words such as the feed's. (An empty routing key, which
// the feed never sends, is one empty word here; RabbitMQ versions differ on it.)
func (p Pattern) Match(key string) bool { return p.MatchWords(Split(key)) }

// MatchWords is Match for a key already split with Split, so that one publish can be
// matched against many patterns with a single split.
func (p Pattern) MatchWords(key []string) bool { return matchWords(p.words, key) }

// Split splits a routing key into its words.
func Split(key string) []string { return strings.Split(key, ".") }

func matchWords(p, k []string) bool {
	for len(p) > 0 {
		switch p[0] {
		case "#":
			for i := 0; i <= len(k); i++ {
				if matchWords(p[1:], k[i:]) {
					return true
				}
			}
			return false
		case "*":
			if len(k) == 0 {
				return false
			}
		default:
			if len(k) == 0 || k[0] != p[0] {
				return false
			}
		}
		p, k = p[1:], k[1:]
	}
	return len(k) == 0
}
