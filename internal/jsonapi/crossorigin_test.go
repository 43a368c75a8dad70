package jsonapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi"
	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

func TestProtectCrossOrigin(t *testing.T) {
	m, f := newMux()
	h := jsonapi.ProtectCrossOrigin(m, f.fail, "changes are taken from friends only")

	refused := []struct {
		method string
		header []string
	}{
		{http.MethodPut, []string{"Sec-Fetch-Site", "cross-site"}},
		{http.MethodPut, []string{"Sec-Fetch-Site", "same-site"}},
		{http.MethodDelete, []string{"Origin", "https://evil.example"}},
	}
	for _, tt := range refused {
		t.Run(tt.method+" "+tt.header[1], func(t *testing.T) {
			e := jsonapitest.DecodeError(t, serve(h, tt.method, "/things/7", "", tt.header...), http.StatusForbidden)
			assert.Contains(t, e.Error, "cross-origin")
			assert.Contains(t, e.Error, ": changes are taken from friends only")
		})
	}
	require.Len(t, f.errs, len(refused), "refused through the ErrorFunc, before the handler")
	var e *jsonapi.Error
	require.ErrorAs(t, f.errs[0], &e)
	assert.Error(t, e.Err, "CrossOriginProtection's error is the cause")

	f.errs = nil
	assert.Equal(t, http.StatusOK, serve(h, http.MethodGet, "/things/7", "", "Sec-Fetch-Site", "cross-site").Code, "reading is no change")
	assert.Equal(t, http.StatusNoContent, serve(h, http.MethodPut, "/things/7", "", "Sec-Fetch-Site", "same-origin").Code)
	assert.Equal(t, http.StatusNoContent, serve(h, http.MethodPut, "/things/7", "").Code, "not a browser")
	assert.Empty(t, f.errs)
}
