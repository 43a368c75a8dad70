package jsonapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi"
)

// thing is what the tests decode.
type thing struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Tags  []string
}

// decode runs DecodeBody on body into dst.
func decode(body string, dst any) error {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	return jsonapi.DecodeBody(httptest.NewRecorder(), r, dst)
}

func TestDecodeBody(t *testing.T) {
	var got thing
	require.NoError(t, decode(` {"name":"a","count":2,"Tags":["x"]} `+"\n", &got))
	assert.Equal(t, thing{Name: "a", Count: 2, Tags: []string{"x"}}, got)
}

func TestDecodeBodyRefuses(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		message    string               // in the message
		fields     []jsonapi.FieldError // nil: none
		noCause    bool                 // true: no error of the decoder behind it
	}{
		{name: "empty", body: "", status: http.StatusBadRequest, message: "the request body is empty; want a JSON object"},
		{name: "unfinished", body: `{"name":`, status: http.StatusBadRequest, message: "malformed JSON: it ends too soon"},
		{name: "syntax", body: `{"name" "a"}`, status: http.StatusBadRequest, message: "malformed JSON at byte 9: invalid character"},
		{name: "not an object", body: `[1]`, status: http.StatusBadRequest, message: "must be a JSON object, not array"},
		{name: "wrong type", body: `{"count":"two"}`, status: http.StatusBadRequest, message: "bad request: count: must be a JSON number, not string",
			fields: []jsonapi.FieldError{{Field: "count", Problem: "must be a JSON number, not string"}}},
		{name: "wrong type in an array", body: `{"Tags":[1]}`, status: http.StatusBadRequest,
			fields: []jsonapi.FieldError{{Field: "Tags", Problem: "must be a JSON string, not number"}}},
		{name: "object for an array", body: `{"Tags":{}}`, status: http.StatusBadRequest,
			fields: []jsonapi.FieldError{{Field: "Tags", Problem: "must be a JSON array, not object"}}},
		{name: "unknown field", body: `{"name":"a","colour":"red"}`, status: http.StatusBadRequest, message: "bad request: colour: is not a known field",
			fields: []jsonapi.FieldError{{Field: "colour", Problem: "is not a known field"}}},
		{name: "trailing value", body: `{"name":"a"} {}`, status: http.StatusBadRequest, message: "one JSON object and nothing after it", noCause: true},
		{name: "trailing junk", body: `{"name":"a"}x`, status: http.StatusBadRequest, message: "nothing after it"},
		{name: "too large", body: `{"name":"` + strings.Repeat("a", jsonapi.MaxBody) + `"}`, status: http.StatusRequestEntityTooLarge,
			message: "the request body is larger than 65536 bytes: http: request body too large"},
		// Only what follows the value passes the limit: still too large, not trailing data.
		{name: "too large after the value", body: `{"name":"a"}` + strings.Repeat(" ", jsonapi.MaxBody) + `{}`,
			status: http.StatusRequestEntityTooLarge, message: "larger than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decode(tt.body, &thing{})
			var e *jsonapi.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.status, e.Status)
			assert.Contains(t, e.Error(), tt.message)
			assert.Equal(t, tt.fields, e.Fields)
			if !tt.noCause {
				assert.Error(t, e.Err, "the decoder's error is the cause")
			}
		})
	}
}

func TestDecodeBodyWithinTheLimit(t *testing.T) {
	body := `{"name":"` + strings.Repeat("a", jsonapi.MaxBody-len(`{"name":""}`)) + `"}`
	require.Len(t, body, jsonapi.MaxBody)
	var got thing
	require.NoError(t, decode(body, &got))
	assert.Len(t, got.Name, jsonapi.MaxBody-len(`{"name":""}`))
}

// validated refuses, in its own UnmarshalJSON, a name that is not lower case.
type validated struct{ Name string }

var errNotLower = errors.New("not lower case")

func (v *validated) UnmarshalJSON(b []byte) error {
	var w struct{ Name string }
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Name != strings.ToLower(w.Name) {
		return errNotLower
	}
	v.Name = w.Name
	return nil
}

func TestDecodeBodyKeepsTheTypesOwnError(t *testing.T) {
	var v validated
	require.NoError(t, decode(`{"Name":"abc"}`, &v))
	assert.Equal(t, "abc", v.Name)

	err := decode(`{"Name":"ABC"}`, &v)
	var e *jsonapi.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusBadRequest, e.Status)
	assert.Equal(t, "the request body is not the JSON object asked for: not lower case", e.Error())
	assert.ErrorIs(t, err, errNotLower, "the API can still find its own error")
}
