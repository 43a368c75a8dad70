package jsonapi_test

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi"
	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	require.NoError(t, jsonapi.WriteJSON(rec, http.StatusCreated, map[string]string{"name": "<b>"}))
	assert.Equal(t, http.StatusCreated, rec.Code)
	assert.Equal(t, http.Header{
		"Content-Type":           {"application/json"},
		"Cache-Control":          {"no-store"},
		"X-Content-Type-Options": {"nosniff"},
	}, rec.Header())
	// What json.Encoder writes: HTML escaped, one line.
	assert.Equal(t, `{"name":"\u003cb\u003e"}`+"\n", rec.Body.String())
}

func TestWriteJSONWritesNothingItCannotEncode(t *testing.T) {
	for name, v := range map[string]any{"a channel": make(chan int), "NaN": math.NaN()} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			err := jsonapi.WriteJSON(rec, http.StatusOK, v)
			var e *jsonapi.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, http.StatusInternalServerError, e.Status)
			assert.Contains(t, e.Error(), "encoding the answer")
			assert.NotNil(t, errors.Unwrap(err), "the encoder's error is the cause")

			assert.False(t, rec.Flushed)
			assert.Empty(t, rec.Header(), "no header set: the error answer sets its own")
			assert.Empty(t, rec.Body.String())

			jsonapi.WriteError(rec, e)
			jsonapitest.DecodeError(t, rec, http.StatusInternalServerError)
		})
	}
}
