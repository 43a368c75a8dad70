package jsonapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// HandlerFunc handles a request of one method of one path. It returns its error rather
// than answering it, so that the API maps every failure to a status in one place.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Methods maps the HTTP methods a path accepts to their handlers.
type Methods map[string]HandlerFunc

// ErrorFunc answers an error: a handler's, or one of the package's *Error (a 404 or 405
// of routing, a 403 of ProtectCrossOrigin), which carries its own status. It is where an
// API decides what its errors mean and what of them a client may see.
type ErrorFunc func(w http.ResponseWriter, r *http.Request, err error)

// Mux routes the requests of a JSON API. Unlike http.ServeMux, which would answer them in
// plain text, it answers a method a path does not accept with a 405 and an Allow header,
// and a path it does not know with a 404, both through its ErrorFunc.
type Mux struct {
	mux  *http.ServeMux
	fail ErrorFunc
}

// NewMux returns a Mux that answers errors with fail. It takes the pattern "/" for its
// 404: a root page is routed as "/{$}".
func NewMux(fail ErrorFunc) *Mux {
	m := &Mux{mux: http.NewServeMux(), fail: fail}
	m.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, &Error{Status: http.StatusNotFound, Message: "no such resource: " + r.URL.Path})
	})
	return m
}

// Route registers the methods of the path pattern (an http.ServeMux pattern without a
// method). A path that accepts GET accepts HEAD too. The Mux dispatches on the method
// itself, rather than with method patterns, because the ServeMux would answer a wrong
// method in plain text.
func (m *Mux) Route(pattern string, ms Methods) {
	ms = maps.Clone(ms)
	if get, ok := ms[http.MethodGet]; ok {
		ms[http.MethodHead] = get // net/http drops the body
	}
	allow := strings.Join(slices.Sorted(maps.Keys(ms)), ", ")
	m.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h, ok := ms[r.Method]
		if !ok {
			w.Header().Set("Allow", allow)
			m.fail(w, r, &Error{Status: http.StatusMethodNotAllowed,
				Message: fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow)})
			return
		}
		if err := h(w, r); err != nil {
			m.fail(w, r, err)
		}
	})
}

// ServeHTTP routes r.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }
