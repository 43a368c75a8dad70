// Package jsonapitest reads the answers of an API built on internal/jsonapi as a client
// would, strictly, for the tests of every such API (carousel's, the locksensors
// example's, jsonapi's own): one reading, so that the APIs are held to the same answer.
package jsonapitest

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi"
)

// ErrorBody is the body of an error answer, as a client reads it.
type ErrorBody struct {
	Error  string               `json:"error"`
	Fields []jsonapi.FieldError `json:"fields"`
}

// Decode checks that rec answered status with JSON, and decodes its body into a T,
// refusing a field T does not have: an API that answers more than the test expects
// fails it, so that a test states the whole answer.
func Decode[T any](t testing.TB, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	require.Equal(t, status, rec.Code, "body: %s", rec.Body)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var v T
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes())) // the body stays whole for the messages
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&v), "body: %s", rec.Body)
	return v
}

// DecodeError checks that rec is an error answer of status with a message, and returns
// its body.
func DecodeError(t testing.TB, rec *httptest.ResponseRecorder, status int) ErrorBody {
	t.Helper()
	e := Decode[ErrorBody](t, rec, status)
	assert.NotEmpty(t, e.Error)
	return e
}
