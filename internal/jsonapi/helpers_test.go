package jsonapi_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/feedkit/feedkit/internal/jsonapi"
)

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
