package sportdata

import (
	"cmp"
	"encoding/json"
	"slices"
)

// Text is a name or a word of the Sports API in every language read so far: the same
// entity read in English and in German holds both. Its zero value holds none.
type Text struct {
	in []langText // few, sorted by language: a lookup scans them
}

type langText struct{ lang, text string }

// TextOf returns a Text holding one language's text; an empty text holds nothing.
func TextOf(lang, text string) Text {
	if text == "" {
		return Text{}
	}
	return Text{in: []langText{{lang, text}}}
}

// In returns the text in lang, or "" when lang was not read or the API gave none.
func (t Text) In(lang string) string {
	for _, l := range t.in {
		if l.lang == lang {
			return l.text
		}
	}
	return ""
}

// Languages returns the languages t holds, sorted.
func (t Text) Languages() []string {
	out := make([]string, len(t.in))
	for i, l := range t.in {
		out[i] = l.lang
	}
	return out
}

// IsZero reports whether t holds no language.
func (t Text) IsZero() bool { return len(t.in) == 0 }

// merged returns t with u's languages added; a language both hold takes u's text, the
// one read last.
func (t Text) merged(u Text) Text {
	if len(u.in) == 0 {
		return t
	}
	if len(t.in) == 0 {
		return u
	}
	out := make([]langText, len(t.in), len(t.in)+len(u.in))
	copy(out, t.in)
	for _, l := range u.in {
		i, found := slices.BinarySearchFunc(out, l.lang, func(x langText, lang string) int { return cmp.Compare(x.lang, lang) })
		if found {
			out[i].text = l.text
		} else {
			out = slices.Insert(out, i, l)
		}
	}
	return Text{in: out}
}

// MarshalJSON writes t as an object of texts by language, as an export holds it.
func (t Text) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(t.in))
	for _, l := range t.in {
		m[l.lang] = l.text
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (t *Text) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	t.in = nil
	for lang, text := range m {
		if text != "" {
			t.in = append(t.in, langText{lang, text})
		}
	}
	slices.SortFunc(t.in, func(a, b langText) int { return cmp.Compare(a.lang, b.lang) })
	return nil
}
