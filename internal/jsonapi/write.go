package jsonapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// WriteJSON answers with status and v as JSON. v is encoded before anything is sent, so
// that a value that cannot be is answered with a 500 rather than a truncated or empty
// 200: WriteJSON then writes nothing and returns an *Error for the caller to answer.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &Error{Status: http.StatusInternalServerError, Message: fmt.Sprintf("encoding the answer: %v", err), Err: err}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// The APIs answer with live state (a cycle's progress, a lock's state) that pages
	// poll for: a cached answer would show a stale one.
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// The status is sent; a failed write means the client went away, nothing to tell.
	_, _ = w.Write(append(b, '\n'))
	return nil
}
