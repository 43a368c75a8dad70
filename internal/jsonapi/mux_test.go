package jsonapi_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi"
	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

// newMux returns a Mux with a root page and a resource /things/{id} whose DELETE fails,
// and what its ErrorFunc was given.
func newMux() (*jsonapi.Mux, *failed) {
	f := &failed{}
	m := jsonapi.NewMux(f.fail)
	m.Route("/{$}", jsonapi.Methods{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) error {
		return jsonapi.WriteJSON(w, http.StatusOK, "root")
	}})
	m.Route("/things/{id}", jsonapi.Methods{
		http.MethodGet: func(w http.ResponseWriter, r *http.Request) error {
			return jsonapi.WriteJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id")})
		},
		http.MethodPut: func(w http.ResponseWriter, _ *http.Request) error {
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
		http.MethodDelete: func(http.ResponseWriter, *http.Request) error { return errDeleteFailed },
	})
	return m, f
}

var errDeleteFailed = errors.New("delete failed")

func TestMuxRoutes(t *testing.T) {
	m, f := newMux()
	rec := serve(m, http.MethodGet, "/things/7", "")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"id":"7"}`, rec.Body.String())
	assert.Equal(t, http.StatusNoContent, serve(m, http.MethodPut, "/things/7", "").Code)
	assert.JSONEq(t, `"root"`, serve(m, http.MethodGet, "/", "").Body.String())
	assert.Empty(t, f.errs)
}

func TestMuxAnswersAHandlersErrorThroughItsErrorFunc(t *testing.T) {
	m, f := newMux()
	e := jsonapitest.DecodeError(t, serve(m, http.MethodDelete, "/things/7", ""), http.StatusInternalServerError)
	assert.Equal(t, "delete failed", e.Error)
	assert.Equal(t, []error{errDeleteFailed}, f.errs, "as the handler returned it")
}

func TestMuxRefusesAMethodWithAllow(t *testing.T) {
	m, f := newMux()
	tests := []struct{ method, target, allow string }{
		{http.MethodPost, "/things/7", "DELETE, GET, HEAD, PUT"},
		{http.MethodPatch, "/things/7", "DELETE, GET, HEAD, PUT"},
		{http.MethodDelete, "/", "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := serve(m, tt.method, tt.target, "")
			e := jsonapitest.DecodeError(t, rec, http.StatusMethodNotAllowed)
			assert.Equal(t, tt.allow, rec.Header().Get("Allow"))
			assert.Equal(t, "method "+tt.method+" is not allowed on "+tt.target+" (allowed: "+tt.allow+")", e.Error)
		})
	}
	require.Len(t, f.errs, len(tests), "every refusal goes through the ErrorFunc")
	var e *jsonapi.Error
	require.ErrorAs(t, f.errs[0], &e)
	assert.Equal(t, http.StatusMethodNotAllowed, e.Status)
}

func TestMuxAnswersAnUnknownPathWith404(t *testing.T) {
	m, f := newMux()
	for _, target := range []string{"/nope", "/things", "/things/", "/things/7/more"} {
		t.Run(target, func(t *testing.T) {
			rec := serve(m, http.MethodPost, target, "")
			e := jsonapitest.DecodeError(t, rec, http.StatusNotFound)
			assert.Equal(t, "no such resource: "+target, e.Error)
			assert.Empty(t, rec.Header().Get("Allow"))
		})
	}
	assert.Len(t, f.errs, 4, "every 404 goes through the ErrorFunc")
}

// TestMuxAnswersHEADAsGETWithoutTheBody runs over a real server: a recorder keeps a
// HEAD's body.
func TestMuxAnswersHEADAsGETWithoutTheBody(t *testing.T) {
	m, _ := newMux()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	fetch := func(method string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+"/things/7", nil)
		require.NoError(t, err)
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, string(b)
	}
	get, body := fetch(http.MethodGet)
	head, none := fetch(http.MethodHead)
	assert.JSONEq(t, `{"id":"7"}`, body)
	assert.Empty(t, none)
	assert.Equal(t, get.StatusCode, head.StatusCode)
	assert.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
}

func TestRouteKeepsItsOwnMethods(t *testing.T) {
	f := &failed{}
	m := jsonapi.NewMux(f.fail)
	ms := jsonapi.Methods{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) error {
		return jsonapi.WriteJSON(w, http.StatusOK, "a")
	}}
	m.Route("/a", ms)
	ms[http.MethodPost] = ms[http.MethodGet] // after Route: no effect on /a
	m.Route("/b", ms)

	assert.Equal(t, "GET, HEAD", serve(m, http.MethodPost, "/a", "").Header().Get("Allow"))
	assert.Equal(t, http.StatusOK, serve(m, http.MethodPost, "/b", "").Code)
	assert.Len(t, ms, 2, "Route adds HEAD to a copy")
}
