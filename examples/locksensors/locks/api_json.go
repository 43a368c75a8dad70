package locks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/feedkit/feedkit/internal/jsonapi"
)

// apiMaxValue bounds a value echoed back in an error: the field may be 64 KiB long.
const apiMaxValue = 200

// apiBadField returns a 400 naming a bad field, path segment or query parameter. Unlike a
// FieldError it carries the value given, which an operator fixing a request wants to see.
func apiBadField(field, value, problem string) error {
	return jsonapi.BadField(field, truncate(value, apiMaxValue), problem)
}

// apiWithValue turns a *FieldError in err into apiBadField's error with the value values
// holds for its field, and returns any other error as it is.
func apiWithValue(err error, values map[string]string) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return apiBadField(fe.Field, values[fe.Field], fe.Problem)
}

// fail answers err as JSON with the status it calls for. A server error is logged in
// full but answered with a generic message: it may hold a database's address or query.
func (a *apiHandler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := apiErrorAnswer(err)
	switch {
	case e.Status == http.StatusServiceUnavailable:
		a.log.Warn("operator API", "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", err)
		e = &jsonapi.Error{Status: e.Status, Message: "the request was cancelled or timed out; try again"}
	case e.Status >= 500:
		a.log.Error("operator API", "method", r.Method, "path", r.URL.Path, "status", e.Status, "err", err)
		e = &jsonapi.Error{Status: e.Status, Message: "internal server error; the server's log has the details"}
	}
	jsonapi.WriteError(w, e)
}

// apiErrorAnswer is what err is answered with, before fail hides a server error's text.
func apiErrorAnswer(err error) *jsonapi.Error {
	var request *jsonapi.Error
	var fe *FieldError
	switch {
	case errors.As(err, &request): // a request's, or routing's
		return request
	case errors.As(err, &fe): // from the Store, which does not know the value
		return jsonapi.BadField(fe.Field, "", fe.Problem)
	}
	return &jsonapi.Error{Status: apiStatusOf(err), Message: err.Error(), Err: err}
}

// apiStatusOf maps an error of the Store to its HTTP status.
func apiStatusOf(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrExists), errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// Not the server's fault: the client went away, or the Store was too slow for the
		// request's deadline.
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// apiQuery returns r's query. A parameter not among known, or given twice, is refused:
// ignored, a misspelt "limt" would give a page of the wrong size, and an "after" sent
// where "cursor" is meant would give the first page for ever.
func apiQuery(r *http.Request, known ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, jsonapi.BadRequest("the query is malformed: " + err.Error())
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		switch {
		case !slices.Contains(known, name):
			return nil, apiBadField(name, q.Get(name), fmt.Sprintf("is not a parameter of %s (it takes %s)", r.URL.Path, strings.Join(known, ", ")))
		case len(q[name]) > 1:
			return nil, apiBadField(name, strings.Join(q[name], ","), "is given more than once")
		}
	}
	return q, nil
}

// apiLimit returns the page size the query asks for, by the rule of every page size
// (ResolveLimit): left out, or 0, is DefaultLimit.
func apiLimit(q url.Values) (int, error) {
	s := q.Get("limit")
	n, err := strconv.Atoi(cmp.Or(s, "0"))
	if err == nil {
		n, err = ResolveLimit("limit", n)
	}
	if err != nil {
		return 0, apiBadField("limit", s, fmt.Sprintf("must be a whole number from 1 to %d, or 0 for %d", MaxLimit, DefaultLimit))
	}
	return n, nil
}

// apiAfterID returns the id the query's after names: the "next" of the previous page of
// a list by id, 0 for the first page.
func apiAfterID(q url.Values) (int64, error) {
	s := q.Get("after")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, apiBadField("after", s, `must be the "next" of the previous page, a whole number from 0`)
	}
	return n, nil
}

// apiRange returns the part of a sensor's history the query asks for, with a page size.
func apiRange(q url.Values) (Range, error) {
	var rg Range
	var err error
	if rg.From, err = apiTime(q, "from"); err != nil {
		return Range{}, err
	}
	if rg.To, err = apiTime(q, "to"); err != nil {
		return Range{}, err
	}
	if !rg.From.IsZero() && !rg.To.IsZero() && rg.From.After(rg.To) {
		return Range{}, apiBadField("to", q.Get("to"), fmt.Sprintf("is before from (%s)", q.Get("from")))
	}
	if rg.Limit, err = apiLimit(q); err != nil {
		return Range{}, err
	}
	if s := q.Get("cursor"); s != "" {
		if rg.After, err = apiDecodeCursor(s); err != nil {
			return Range{}, apiBadField("cursor", s, `must be the "next_cursor" of the previous page, as it came`)
		}
	}
	return rg, nil
}

// apiTime returns the query's parameter name as a time, zero when it is absent.
func apiTime(q url.Values, name string) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	// An offset's "+" left unescaped in a URL arrives as a space; no RFC 3339 time Go
	// reads has one, so it can only be that.
	t, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(s, " ", "+"))
	if err != nil {
		return time.Time{}, apiBadField(name, s, "must be an RFC 3339 time, e.g. 2026-03-02T09:00:00Z")
	}
	return t, nil
}

// apiEncodeCursor returns the cursor of the page after the entry at, id. It is opaque
// to clients, so its form may change; it is base64 only so that it passes through a URL
// unescaped.
func apiEncodeCursor(at time.Time, id int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d", at.UnixNano(), id))
}

// apiDecodeCursor parses what apiEncodeCursor returns.
func apiDecodeCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, err
	}
	ns, id, ok := bytes.Cut(b, []byte("."))
	if !ok {
		return Cursor{}, errors.New("no separator")
	}
	n, err := strconv.ParseInt(string(ns), 10, 64)
	if err != nil {
		return Cursor{}, err
	}
	c := Cursor{At: time.Unix(0, n).UTC()}
	if c.ID, err = strconv.ParseInt(string(id), 10, 64); err != nil {
		return Cursor{}, err
	}
	if c.ID <= 0 {
		return Cursor{}, errors.New("not an id")
	}
	return c, nil
}

// apiPage fetches a page of limit entries with fetch and reports whether another page
// follows. It asks for one entry more than the page holds, a lookahead that spares a
// client the empty page it would otherwise fetch after a full last one; at MaxLimit,
// beyond which a Store refuses a page, a full page is followed by a read of the one
// entry after its last (next) instead.
func apiPage[T any](limit int, fetch func(n int) ([]T, error), next func(last T) ([]T, error)) ([]T, bool, error) {
	n := limit
	if n < MaxLimit {
		n++
	}
	items, err := fetch(n)
	if err != nil {
		return nil, false, err
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	if items == nil {
		items = []T{} // [], not null
	}
	if n == limit && len(items) == limit {
		after, err := next(items[limit-1])
		if err != nil {
			return nil, false, err
		}
		more = len(after) > 0
	}
	return items, more, nil
}

// apiSensorID returns the sensor id of the request's path.
func apiSensorID(r *http.Request) (SensorID, error) {
	s := r.PathValue("id")
	id, err := ParseSensorID(s)
	if err != nil {
		var fe *FieldError
		errors.As(err, &fe)
		return "", apiBadField("id", s, fe.Problem)
	}
	return id, nil
}

// apiPathID returns the path segment name as an id: a whole number from 1, as the
// Store assigns them.
func apiPathID(r *http.Request, name string) (int64, error) {
	s := r.PathValue(name)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, apiBadField(name, s, "must be a whole number from 1")
	}
	return n, nil
}
