package jsonapi

import "net/http"

// Error is an error together with the answer it calls for. The package's own errors are
// *Error; an API turns its other errors into one in its ErrorFunc.
type Error struct {
	// Status is the HTTP status; 0 is answered as 500.
	Status int
	// Message is the "error" of the body; "" is the status's text.
	Message string
	// Fields are the request's bad fields, listed in the body.
	Fields []FieldError
	// Err is the cause, if any: for the log, and for errors.Is and errors.As, which see
	// through an Error to it.
	Err error
}

// Error returns the message, or without one the status's text.
func (e *Error) Error() string {
	if e.Message == "" {
		return http.StatusText(e.status())
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// status is the status e is answered with: an Error made without one is a server bug,
// and http.ResponseWriter panics on a status of 0.
func (e *Error) status() int {
	if e.Status == 0 {
		return http.StatusInternalServerError
	}
	return e.Status
}

// FieldError is one bad field, path segment or query parameter of a request, as an error
// body lists it, so that a client can point at what to fix.
type FieldError struct {
	// Field names it, e.g. "throttle" or "limit".
	Field string `json:"field"`
	// Value is the value given, as text; "" when it was missing or is not known.
	Value string `json:"value"`
	// Problem says what is wrong, e.g. "is not a known field".
	Problem string `json:"problem"`
}

// BadRequest returns a 400 for a request that is malformed as a whole rather than in
// one field, e.g. a query that does not parse.
func BadRequest(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: msg}
}

// BadField returns a 400 for one bad field. Its message names the field too, so that a
// client that shows only the message still says which field to fix.
func BadField(field, value, problem string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: "bad request: " + field + ": " + problem,
		Fields: []FieldError{{Field: field, Value: value, Problem: problem}}}
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error  string       `json:"error"`
	Fields []FieldError `json:"fields,omitempty"`
}

// WriteError answers with e's status and e as an error body. It logs nothing: which
// errors are worth a log line, and what of a server error a client may see, is the
// ErrorFunc's to decide before it calls WriteError.
func WriteError(w http.ResponseWriter, e *Error) {
	// An error body always encodes, so there is no error to answer in turn.
	_ = WriteJSON(w, e.status(), errorBody{Error: e.Error(), Fields: e.Fields})
}
