package feedapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The recovery requests. Each is sent once: package recovery decides when to send one,
// within the account's limits, and when to send it again.

// InitiateRecovery asks the feed to replay producer p's messages since after, tagged with
// requestID and ended by a snapshot_complete of the same id. A zero after asks for the
// current state only (a full snapshot).
func (c *Client) InitiateRecovery(ctx context.Context, p feed.Producer, after time.Time, requestID int64) error {
	q := url.Values{}
	if !after.IsZero() {
		q.Set("after", strconv.FormatInt(after.UnixMilli(), 10))
	}
	return c.post(ctx, p, "recovery/initiate_request", requestID, q)
}

// InitiateEventRecovery asks the feed to resend the current odds of one event.
func (c *Client) InitiateEventRecovery(ctx context.Context, p feed.Producer, event feed.URN, requestID int64) error {
	if event.IsZero() {
		return errors.New("feedapi: event recovery: the event URN is zero")
	}
	return c.post(ctx, p, "odds/events/"+event.String()+"/initiate_request", requestID, url.Values{})
}

// InitiateEventStatefulRecovery asks the feed to resend the stateful messages (bet
// settlements, cancels and their rollbacks) of one event.
func (c *Client) InitiateEventStatefulRecovery(ctx context.Context, p feed.Producer, event feed.URN, requestID int64) error {
	if event.IsZero() {
		return errors.New("feedapi: event recovery: the event URN is zero")
	}
	return c.post(ctx, p, "stateful_messages/events/"+event.String()+"/initiate_request", requestID, url.Values{})
}

func (c *Client) post(ctx context.Context, p feed.Producer, path string, requestID int64, q url.Values) error {
	if p.APIPath == "" {
		return fmt.Errorf("feedapi: recovery for producer %d (%s): its APIPath is empty", p.ID, p.Name)
	}
	q.Set("request_id", strconv.FormatInt(requestID, 10))
	if n, ok := c.s.Node.Int(); ok {
		q.Set("node_id", strconv.Itoa(n))
	}
	u := c.s.base.JoinPath("v1", p.APIPath, path)
	u.RawQuery = q.Encode()
	_, err := c.do(ctx, http.MethodPost, u, 0)
	if err != nil {
		var apiErr *feed.APIError
		if !errors.As(err, &apiErr) {
			return fmt.Errorf("feedapi: recovery request for producer %s: %w", p.Name, err)
		}
	}
	return err
}
