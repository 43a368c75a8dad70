package carouselhttp

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/jsonapi"
)

// fail answers err as JSON with the status it calls for, listing its bad fields: those of
// a config (FieldErrors) and those of a request body. A server error is logged too.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := errorAnswer(err)
	if e.Status >= 500 {
		a.log.Error("operator API", "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", err)
	}
	jsonapi.WriteError(w, e)
}

// errorAnswer is what err is answered with. Its text is err's own, unless err names bad
// fields: then it is theirs, one after another, on one line.
func errorAnswer(err error) *jsonapi.Error {
	e := &jsonapi.Error{Status: statusOf(err), Message: err.Error(), Err: err}
	var request *jsonapi.Error
	if errors.As(err, &request) {
		e.Fields = append(e.Fields, request.Fields...) // the body's, e.g. an unknown field
	}
	for _, fe := range fieldErrors(err) {
		e.Fields = append(e.Fields, jsonapi.FieldError{Field: fe.Field, Value: fe.Value, Problem: fe.Problem})
	}
	if len(e.Fields) > 0 {
		msgs := make([]string, len(e.Fields))
		for i, f := range e.Fields {
			// In the words of a FieldError, whichever side found the field bad.
			msgs[i] = (&carousel.FieldError{Field: f.Field, Value: f.Value, Problem: f.Problem}).Error()
		}
		// errors.Join's newlines read badly in one JSON string.
		e.Message = strings.Join(msgs, "; ")
	}
	return e
}

// statusOf maps an error of the Scheduler or of a request to its HTTP status.
func statusOf(err error) int {
	var request *jsonapi.Error
	switch {
	case errors.As(err, &request): // routing's, or a request body's
		return request.Status
	case errors.Is(err, carousel.ErrInvalidConfig):
		return http.StatusBadRequest
	case errors.Is(err, carousel.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, carousel.ErrExists), errors.Is(err, carousel.ErrNotAdjustable),
		errors.Is(err, carousel.ErrPassive), errors.Is(err, carousel.ErrLeaseHeld), errors.Is(err, carousel.ErrFenced):
		return http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fieldErrors returns the FieldErrors in err's tree, in order. errors.As would find only
// the first of a joined error's.
func fieldErrors(err error) []*carousel.FieldError {
	var out []*carousel.FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *carousel.FieldError:
			out = append(out, e) // its Unwrap leads to ErrInvalidConfig only
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}
