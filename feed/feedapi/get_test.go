package feedapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

// Get sends the token in its header, the path and query as given, and returns the body;
// a refusal is an *APIError naming the URL, which never carries the token; an answer
// larger than max is refused.
func TestGet(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-access-token") != "secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		paths = append(paths, r.URL.RequestURI())
		switch r.URL.Path {
		case "/v1/descriptions/en/markets.xml":
			_, _ = w.Write([]byte("<market_descriptions/>"))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<response response_code="NOT_FOUND"/>`))
		}
	}))
	defer srv.Close()
	c, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: "secret"})
	require.NoError(t, err)
	ctx := context.Background()

	body, err := c.Get(ctx, "v1/descriptions/en/markets.xml?include_mappings=true", 1<<20)
	require.NoError(t, err)
	assert.Equal(t, "<market_descriptions/>", string(body))

	_, err = c.Get(ctx, "v1/sports/en/sport_events/sr:match:1/summary.xml", 1<<20)
	var apiErr *feed.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.True(t, errors.Is(err, feed.ErrNotFound))
	assert.Equal(t, srv.URL+"/v1/sports/en/sport_events/sr:match:1/summary.xml", apiErr.URL)
	assert.NotContains(t, err.Error(), "secret")

	_, err = c.Get(ctx, "v1/descriptions/en/markets.xml", 5)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than 5 bytes")

	_, err = c.Get(ctx, "v1/descriptions/en/markets.xml", 0)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "max 0"), "%v", err)

	assert.Equal(t, []string{
		"/v1/descriptions/en/markets.xml?include_mappings=true",
		"/v1/sports/en/sport_events/sr:match:1/summary.xml",
		"/v1/descriptions/en/markets.xml",
	}, paths)
}
