package carousel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
)

// maxRequestBody bounds a request body: a cycle's config is a few hundred bytes.
const maxRequestBody = 64 << 10

// errorJSON is the body of every error response.
type errorJSON struct {
	Error  string      `json:"error"`
	Fields []fieldJSON `json:"fields,omitempty"`
}

// fieldJSON is a FieldError in an error response.
type fieldJSON struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Problem string `json:"problem"`
}

// writeJSON writes v as the response body with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// The status page polls; a cached answer would show a stale cycle.
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// The status is sent; a failed write means the client went away, nothing to tell.
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with the status err calls for.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	a.fail(w, r, statusOf(err), err)
}

// fail answers with status and err as JSON, listing err's FieldErrors.
func (a *api) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status >= 500 {
		a.log.Error("operator API", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	body := errorJSON{Error: err.Error()}
	if fes := fieldErrors(err); len(fes) > 0 {
		msgs := make([]string, len(fes))
		for i, fe := range fes {
			msgs[i] = fe.Error()
			body.Fields = append(body.Fields, fieldJSON{Field: fe.Field, Value: fe.Value, Problem: fe.Problem})
		}
		// errors.Join's newlines read badly in one JSON string.
		body.Error = strings.Join(msgs, "; ")
	}
	writeJSON(w, status, body)
}

// statusOf maps an error of the Scheduler or of a request body to its HTTP status.
func statusOf(err error) int {
	var tooLarge *http.MaxBytesError
	var bad *badRequestError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &bad), errors.Is(err, ErrInvalidConfig):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrExists), errors.Is(err, ErrNotAdjustable),
		errors.Is(err, ErrPassive), errors.Is(err, ErrLeaseHeld):
		return http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fieldErrors returns the FieldErrors in err's tree, in order. errors.As would find only
// the first of a joined error's.
func fieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *FieldError:
			out = append(out, e) // its Unwrap leads to ErrInvalidConfig only
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// badRequestError is a request body that is not the JSON asked for.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return e.msg }

// unknownFieldRE finds the field that encoding/json's DisallowUnknownFields refused; it
// reports the field only in its message.
var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]*)"`)

// decodeBody reads the request body, at most maxRequestBody of it, as one JSON value into
// dst. Its errors name the bad field where there is one, for statusOf and fail.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return err
		}
		return &badRequestError{"the request body must hold one JSON object and nothing after it"}
	}
	return nil
}

// bodyError explains why a body did not decode.
func bodyError(err error) error {
	var tooLarge *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("the request body is larger than %d bytes: %w", maxRequestBody, err)
	case errors.Is(err, io.EOF):
		return &badRequestError{"the request body is empty; want a JSON object"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &badRequestError{"the request body is malformed JSON: it ends too soon"}
	case errors.As(err, &syntax):
		return &badRequestError{fmt.Sprintf("the request body is malformed JSON at byte %d: %v", syntax.Offset, err)}
	case errors.As(err, &typ) && typ.Field != "":
		return &FieldError{Field: typ.Field, Problem: fmt.Sprintf("must be a JSON %s, not %s", jsonKind(typ.Type.Kind()), typ.Value)}
	case errors.As(err, &typ):
		return &badRequestError{"the request body must be a JSON object, not " + typ.Value}
	}
	if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil && len(fieldErrors(err)) == 0 {
		return errors.Join(err, &FieldError{Field: m[1], Problem: "is not a known field"})
	}
	return err // CycleConfig's own errors, FieldErrors joined
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
