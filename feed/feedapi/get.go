package feedapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Get reads the API document at path, relative to the client's BaseURL and in escaped
// form, with its query if any (such as "v1/descriptions/en/markets.xml?include_mappings=true"),
// and returns its body, refusing one larger than max bytes. It is retried as every GET
// is (Config.MaxAttempts). An answer other than 2xx is a *feed.APIError with the request
// URL (the access token travels in a header, never in the URL).
//
// It lets other parts of the kit, and the host, read the Sports API through the client
// the SDK already has: feed/markets reads market descriptions, event summaries and
// profiles with it.
func (c *Client) Get(ctx context.Context, path string, max int64) ([]byte, error) {
	if max <= 0 {
		return nil, fmt.Errorf("feedapi: GET %s: max %d must be positive", path, max)
	}
	p, query, _ := strings.Cut(path, "?")
	u := c.s.base.JoinPath(p)
	u.RawQuery = query
	a, err := c.do(ctx, http.MethodGet, u, max)
	return a.body, err
}
