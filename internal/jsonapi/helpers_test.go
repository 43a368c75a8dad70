package jsonapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi"
)

// errorBody is the body of an error answer, as a client reads it.
type errorBody struct {
	Error  string               `json:"error"`
	Fields []jsonapi.FieldError `json:"fields"`
}

// decodeError checks that rec is a JSON error answer of status, and returns its body.
func decodeError(t *testing.T, rec *httptest.ResponseRecorder, status int) errorBody {
	t.Helper()
	var e errorBody
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields() // the body has "error" and "fields", nothing else
	require.NoError(t, dec.Decode(&e), "body: %s", rec.Body)
	assert.Equal(t, [2]any{status, "application/json"}, [2]any{rec.Code, rec.Header().Get("Content-Type")}, "error: %s", e.Error)
	return e
}

// failed records what a test's ErrorFunc was given, and answers it as an API would that
// knows no errors of its own: a package *Error as it is, anything else as a 500.
type failed struct{ errs []error }

func (f *failed) fail(w http.ResponseWriter, _ *http.Request, err error) {
	f.errs = append(f.errs, err)
	var e *jsonapi.Error
	if !errors.As(err, &e) {
		e = &jsonapi.Error{Status: http.StatusInternalServerError, Message: err.Error(), Err: err}
	}
	jsonapi.WriteError(w, e)
}

// serve runs one request through h; a body of "" sends none. header holds name, value
// pairs.
func serve(h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
