package feedtest

import "net/http"

// apiMux is the API's ServeMux, which remembers the patterns registered on it, so that
// the routes the API serves can be listed (apiRoutes) and each checked by the tests.
// Routes are registered with its HandleFunc, never on the ServeMux inside, which it keeps
// to itself so that no route escapes the list.
type apiMux struct {
	mux      *http.ServeMux
	patterns []string
}

func newAPIMux() *apiMux { return &apiMux{mux: http.NewServeMux()} }

// HandleFunc registers handler for pattern, as http.ServeMux.HandleFunc does.
func (m *apiMux) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.mux.HandleFunc(pattern, handler)
}

// Handler returns the handler r goes to and its pattern, as http.ServeMux.Handler does.
func (m *apiMux) Handler(r *http.Request) (http.Handler, string) { return m.mux.Handler(r) }

func (m *apiMux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }

// apiRoutes returns the patterns of every route APIHandler serves, in the order they are
// registered, the catch-all for unknown routes (routeUnknown) last.
func (s *Simulator) apiRoutes() []string {
	m := newAPIMux()
	s.registerAPI(m, Account{})
	return m.patterns
}
