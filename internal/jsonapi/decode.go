package jsonapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
)

// MaxBody bounds a request body: what the APIs take (a cycle's config, a sensor, a
// client) is a few hundred bytes, and a client must not make the server buffer more.
const MaxBody = 64 << 10

// DecodeBody reads the request body, at most MaxBody bytes of it, as one JSON value into
// dst, refusing unknown fields and anything after the value. Its error, for the
// ErrorFunc, is an *Error: a 413 for a body too large, else a 400 naming the bad field
// where there is one. An error of dst's own UnmarshalJSON is the Error's cause, so that
// the API can still find its own errors in it (a config's bad fields, say).
func DecodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			// Too large only in what follows the value: still too large, which says
			// more than "nothing after it" would.
			return bodyError(err)
		}
		e := BadRequest("the request body must hold one JSON object and nothing after it")
		e.Err = err // nil when what follows is JSON too
		return e
	}
	return nil
}

// unknownFieldRE finds the field that encoding/json's DisallowUnknownFields refused; it
// names the field only in its message.
var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]*)"`)

// bodyError explains why a body did not decode.
func bodyError(err error) *Error {
	var tooLarge *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var e *Error
	switch {
	case errors.As(err, &tooLarge):
		e = &Error{Status: http.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes: %v", MaxBody, err)}
	case errors.Is(err, io.EOF):
		e = BadRequest("the request body is empty; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		e = BadRequest("the request body is malformed JSON: it ends too soon")
	case errors.As(err, &syntax):
		e = BadRequest(fmt.Sprintf("the request body is malformed JSON at byte %d: %v", syntax.Offset, err))
	case errors.As(err, &typ) && typ.Field != "":
		e = BadField(typ.Field, "", fmt.Sprintf("must be a JSON %s, not %s", jsonKind(typ.Type.Kind()), typ.Value))
	case errors.As(err, &typ):
		e = BadRequest("the request body must be a JSON object, not " + typ.Value)
	default:
		if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
			e = BadField(m[1], "", "is not a known field")
		} else {
			// dst's own UnmarshalJSON refused the value.
			e = BadRequest("the request body is not the JSON object asked for: " + err.Error())
		}
	}
	e.Err = err
	return e
}

// jsonKind names the JSON type that decodes into a Go kind.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	}
	return "number"
}
