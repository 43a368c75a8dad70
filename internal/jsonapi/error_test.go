package jsonapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/internal/jsonapi"
	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

func TestWriteErrorWritesTheBody(t *testing.T) {
	rec := httptest.NewRecorder()
	jsonapi.WriteError(rec, &jsonapi.Error{Status: http.StatusBadRequest, Message: "two bad fields",
		Fields: []jsonapi.FieldError{{Field: "a", Value: "1", Problem: "is odd"}, {Field: "b", Problem: "is required"}}})
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.JSONEq(t, `{"error":"two bad fields","fields":[{"field":"a","value":"1","problem":"is odd"},
		{"field":"b","value":"","problem":"is required"}]}`, rec.Body.String(), "value is always there, \"\" when missing")

	rec = httptest.NewRecorder()
	jsonapi.WriteError(rec, &jsonapi.Error{Status: http.StatusNotFound, Message: "no such thing"})
	assert.JSONEq(t, `{"error":"no such thing"}`, rec.Body.String(), "no fields, no \"fields\"")
}

func TestWriteErrorDefaults(t *testing.T) {
	rec := httptest.NewRecorder()
	jsonapi.WriteError(rec, &jsonapi.Error{})
	e := jsonapitest.DecodeError(t, rec, http.StatusInternalServerError)
	assert.Equal(t, "Internal Server Error", e.Error, "no status is a server bug, not a panic")

	rec = httptest.NewRecorder()
	jsonapi.WriteError(rec, &jsonapi.Error{Status: http.StatusConflict})
	assert.Equal(t, "Conflict", jsonapitest.DecodeError(t, rec, http.StatusConflict).Error)
}

func TestErrorUnwrapsToItsCause(t *testing.T) {
	cause := errors.New("the cause")
	err := fmt.Errorf("wrapped: %w", &jsonapi.Error{Status: http.StatusTeapot, Message: "short and stout", Err: cause})
	assert.ErrorIs(t, err, cause)
	var e *jsonapi.Error
	assert.ErrorAs(t, err, &e)
	assert.Equal(t, "short and stout", e.Error(), "the message, not the cause's")
}

func TestBadFieldAndBadRequest(t *testing.T) {
	e := jsonapi.BadField("limit", "ten", "must be a whole number")
	assert.Equal(t, http.StatusBadRequest, e.Status)
	assert.Equal(t, "bad request: limit: must be a whole number", e.Error(), "the message names the field too")
	assert.Equal(t, []jsonapi.FieldError{{Field: "limit", Value: "ten", Problem: "must be a whole number"}}, e.Fields)

	e = jsonapi.BadRequest("the query is malformed")
	assert.Equal(t, http.StatusBadRequest, e.Status)
	assert.Equal(t, "the query is malformed", e.Error())
	assert.Empty(t, e.Fields)
}
