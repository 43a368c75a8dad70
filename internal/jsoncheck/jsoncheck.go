// Package jsoncheck tests that a type encodes to JSON in the kit's one style: every
// field named in snake_case by its json tag, no Go field name leaking, every map keyed by
// something with a text form, and a value that survives the round trip.
package jsoncheck

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	timeType      = reflect.TypeFor[time.Time]()
)

// Problems lists what keeps type t from encoding in the kit's style, one line each,
// naming the field by its path from t (a struct type is checked once, where it is first
// met): an exported field without a json tag, or whose
// tag's name is not snake_case; a map whose key has no text form. A type that marshals
// itself (json.Marshaler, encoding.TextMarshaler) is taken as it is.
func Problems(t reflect.Type) []string {
	var out []string
	walk(t, t.String(), map[reflect.Type]bool{}, &out)
	return out
}

func marshalsItself(t reflect.Type) bool {
	return t == timeType || t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

func walk(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	if marshalsItself(t) {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		walk(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String && !marshalsItself(k) && !isInteger(k) {
			*out = append(*out, fmt.Sprintf("%s: map key %s has no text form", path, k))
		}
		walk(t.Elem(), path+"[key]", seen, out)
	case reflect.Interface, reflect.Func, reflect.Chan:
		*out = append(*out, fmt.Sprintf("%s: %s does not encode to JSON", path, t))
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, ok := f.Tag.Lookup("json")
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				walk(f.Type, path, seen, out) // its fields are flattened into t's
			case !ok || name == "":
				*out = append(*out, fmt.Sprintf("%s.%s has no json name", path, f.Name))
			case !snakeCase.MatchString(name):
				*out = append(*out, fmt.Sprintf("%s.%s is named %q, not snake_case", path, f.Name, name))
			default:
				walk(f.Type, path+"."+name, seen, out)
			}
		}
	}
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// Filled returns a T with every exported field set, recursively, to a non-zero value
// of its own (numbers 1, 2, 3, ... in field order, strings "s1", "s2", ..., times a second
// apart in UTC, one element in each slice and map), so that a round trip shows any field
// that is lost or confused with another. A value of a type that marshals itself as text
// is set to the first number that it can marshal, for an enum with a fixed set of names.
func Filled[T any]() T {
	var v T
	n := 0
	fill(reflect.ValueOf(&v).Elem(), &n)
	return v
}

func fill(v reflect.Value, n *int) {
	t := v.Type()
	if t == timeType {
		*n++
		v.Set(reflect.ValueOf(time.Date(2026, 11, 26, 12, 0, *n, 0, time.UTC)))
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		*n++
		setEnum(v, func(i int) { v.SetInt(int64(i)) }, *n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		*n++
		setEnum(v, func(i int) { v.SetUint(uint64(i)) }, *n)
	case reflect.Float32, reflect.Float64:
		*n++
		v.SetFloat(float64(*n) + 0.5)
	case reflect.String:
		*n++
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		fill(p.Elem(), n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(t, 1, 1)
		fill(s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(t)
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		fill(k, n)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	}
}

// setEnum sets v to want, or, for a type with a text form that cannot marshal want (an
// enum), to the first of 1, 2, ... and then 0 that it can.
func setEnum(v reflect.Value, set func(int), want int) {
	marshals := func() bool {
		m, ok := v.Interface().(encoding.TextMarshaler)
		if !ok {
			return true
		}
		_, err := m.MarshalText()
		return err == nil
	}
	set(want)
	if marshals() {
		return
	}
	for _, i := range append(seq(1, want), 0) {
		if set(i); marshals() {
			return
		}
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// RoundTrip checks the style of T (Problems), encodes v, decodes the JSON into a new T
// and fails t unless it equals v; it returns the JSON, for further checks.
func RoundTrip[T any](t testing.TB, v T) []byte {
	t.Helper()
	for _, p := range Problems(reflect.TypeFor[T]()) {
		t.Error(p)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%T): %v", v, err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("json.Unmarshal into %T: %v\n%s", back, err, b)
	}
	if !reflect.DeepEqual(v, back) {
		t.Errorf("%T changed in the round trip:\nbefore %+v\nafter  %+v\njson   %s", v, v, back, b)
	}
	return b
}

// Keys returns the keys of the JSON object b at the top level.
func Keys(t testing.TB, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
