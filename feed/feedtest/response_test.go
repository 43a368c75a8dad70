package feedtest_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/feedtest"
)

// responseXML is the API's <response> document as UnifiedFeedResponse.xsd has it: an
// action and a message, both required, and a response_code of the schema's values.
type responseXML struct {
	XMLName xml.Name `xml:"response"`
	Code    string   `xml:"response_code,attr"`
	Action  *string  `xml:"action"`
	Message *string  `xml:"message"`
}

var schemaResponseCodes = []string{"OK", "CREATED", "ACCEPTED", "FORBIDDEN", "NOT_FOUND", "CONFLICT",
	"SERVICE_UNAVAILABLE", "NOT_IMPLEMENTED", "MOVED_PERMANENTLY", "BAD_REQUEST"}

// Every answer of the API that is not a document of its own is a <response> with its
// action, its message and a response_code the schema allows: refusals, unknown routes
// and methods, recovery answers accepted and refused.
func TestAPIAnswersWithTheSchemasResponse(t *testing.T) {
	a := newSportsAPI(t, feedtest.SimulatorConfig{}, 10)
	call := func(method, path, token string) (int, []byte) {
		req, err := http.NewRequestWithContext(t.Context(), method, a.srv.URL+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("x-access-token", token)
		}
		resp, err := a.srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}
	tok := feedtest.DefaultAccessToken
	for _, c := range []struct {
		method, path, token string
		status              int
		code, message       string
	}{
		{"GET", "/v1/users/whoami.xml", "wrong", http.StatusUnauthorized, "FORBIDDEN", "x-access-token"},
		{"GET", "/v1/no/such/endpoint.xml", tok, http.StatusNotFound, "NOT_FOUND", "no such endpoint"},
		{"GET", "/v1/sports/en/players/sr:player:999999999/profile.xml", tok, http.StatusNotFound, "NOT_FOUND", "sr:player:999999999"},
		{"POST", "/v1/liveodds/recovery/initiate_request?request_id=1", tok, http.StatusAccepted, "ACCEPTED", "accepted"},
		{"POST", "/v1/liveodds/recovery/initiate_request?request_id=x", tok, http.StatusBadRequest, "BAD_REQUEST", "request_id"},
		{"POST", "/v1/nosuchproduct/recovery/initiate_request?request_id=2", tok, http.StatusNotFound, "NOT_FOUND", "unknown product"},
		{"POST", "/v1/liveodds/odds/events/not-a-urn/initiate_request?request_id=3", tok, http.StatusBadRequest, "BAD_REQUEST", `URN "not-a-urn"`},
		{"POST", "/v1/liveodds/stateful_messages/events/sr:match/initiate_request?request_id=4", tok, http.StatusBadRequest, "BAD_REQUEST", `URN "sr:match"`},
		{"GET", "/v1/liveodds/recovery/initiate_request", tok, http.StatusMethodNotAllowed, "BAD_REQUEST", "GET is not allowed here: POST"},
	} {
		status, body := call(c.method, c.path, c.token)
		what := c.method + " " + c.path
		assert.Equal(t, c.status, status, "%s: %s", what, body)
		var r responseXML
		require.NoError(t, xml.Unmarshal(body, &r), "%s: %s", what, body)
		assert.Equal(t, c.code, r.Code, what)
		assert.Contains(t, schemaResponseCodes, r.Code, what)
		if assert.NotNil(t, r.Action, "%s: <action>", what) {
			assert.Equal(t, strings.SplitN(c.path, "?", 2)[0], *r.Action, what)
		}
		if assert.NotNil(t, r.Message, "%s: <message>", what) {
			assert.Contains(t, *r.Message, c.message, what)
		}
	}
}
