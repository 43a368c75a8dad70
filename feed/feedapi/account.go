package feedapi

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// The account's side of the feed's API: who the access token belongs to, and which
// producers the account receives. The SDK reads both at Open.

// maxDescriptionSize bounds the answers read here: the producer list is a few kilobytes.
const maxDescriptionSize = 1 << 20

// BookmakerDetails is what the API says of the account an access token belongs to
// (GET /v1/users/whoami.xml).
type BookmakerDetails struct {
	// BookmakerID is the account's id; the feed's virtual host is named after it.
	BookmakerID int
	// VirtualHost is the broker's virtual host of the account's exchange, such as
	// "/unifiedfeed/12345".
	VirtualHost string
	// ExpireAt is when the access token stops working; zero when the API did not say.
	ExpireAt time.Time
	// ClockOffset is how far the API server's clock is ahead of ours (behind when
	// negative), read off the answer's Date header against the middle of the request on
	// the client's clock, to within about a second (Date counts whole seconds). The feed
	// stamps its messages with its own clock, so an offset of seconds shows in every
	// delay measured against it. HasClockOffset is false when the answer had no Date.
	ClockOffset    time.Duration
	HasClockOffset bool
}

type whoamiXML struct {
	XMLName     xml.Name `xml:"bookmaker_details"`
	BookmakerID string   `xml:"bookmaker_id,attr"`
	VirtualHost string   `xml:"virtual_host,attr"`
	ExpireAt    string   `xml:"expire_at,attr"`
	Message     string   `xml:"message"`
}

// ParseBookmakerDetails reads a whoami.xml document. A missing or malformed bookmaker_id
// or virtual_host is an error naming the field; expire_at is optional. The clock offset,
// which the document does not carry, is left unknown.
func ParseBookmakerDetails(b []byte) (BookmakerDetails, error) {
	var x whoamiXML
	if err := xml.Unmarshal(b, &x); err != nil {
		return BookmakerDetails{}, fmt.Errorf("feedapi: whoami: %w", err)
	}
	id, err := strconv.Atoi(x.BookmakerID)
	if err != nil || id <= 0 {
		return BookmakerDetails{}, fmt.Errorf("feedapi: whoami: bookmaker_id %q is not a positive integer", x.BookmakerID)
	}
	if x.VirtualHost == "" {
		return BookmakerDetails{}, fmt.Errorf("feedapi: whoami: virtual_host is empty")
	}
	d := BookmakerDetails{BookmakerID: id, VirtualHost: x.VirtualHost}
	if x.ExpireAt != "" {
		if d.ExpireAt, err = time.Parse(time.RFC3339, x.ExpireAt); err != nil {
			return BookmakerDetails{}, fmt.Errorf("feedapi: whoami: expire_at %q is not an RFC 3339 time", x.ExpireAt)
		}
	}
	return d, nil
}

// WhoAmI asks the API whose the access token is, and keeps the answer for VirtualHost.
// A refused token is a *feed.APIError that matches feed.ErrUnauthorized (401) or
// feed.ErrForbidden (403).
func (c *Client) WhoAmI(ctx context.Context) (BookmakerDetails, error) {
	a, err := c.do(ctx, http.MethodGet, c.s.base.JoinPath("v1", "users", "whoami.xml"), maxDescriptionSize)
	if err != nil {
		return BookmakerDetails{}, fmt.Errorf("feedapi: whoami: %w", err)
	}
	d, err := ParseBookmakerDetails(a.body)
	if err != nil {
		return BookmakerDetails{}, err
	}
	if date, err := http.ParseTime(a.header.Get("Date")); err == nil {
		// Date is truncated to the second: the server's time was in [date, date+1s).
		mid := a.sentAt.Add(a.answered.Sub(a.sentAt) / 2)
		d.ClockOffset, d.HasClockOffset = date.Add(time.Second/2).Sub(mid).Round(time.Millisecond), true
	}
	c.mu.Lock()
	c.details = &d
	c.mu.Unlock()
	return d, nil
}

// VirtualHost returns the broker's virtual host of the account, from the last WhoAmI, or
// from a WhoAmI it sends when there was none. It makes the client a
// rabbitmq.VirtualHostSource: the transport asks it when it first connects.
func (c *Client) VirtualHost(ctx context.Context) (string, error) {
	c.mu.Lock()
	d := c.details
	c.mu.Unlock()
	if d != nil {
		return d.VirtualHost, nil
	}
	details, err := c.WhoAmI(ctx)
	if err != nil {
		return "", err
	}
	return details.VirtualHost, nil
}

// ProducerDescription is a producer as the API describes it to an account
// (GET /v1/descriptions/producers.xml).
type ProducerDescription struct {
	// Producer holds the id, name, description, scope, recovery window (the API's
	// stateful recovery window) and APIPath (the last segment of APIURL); its
	// HeartbeatLimit is DefaultHeartbeatLimit of its scope.
	feed.Producer
	// Active reports whether the account receives the producer's messages: an inactive
	// producer sends the account nothing, so waiting for its alives would wait forever.
	Active bool
	// APIURL is the root of the producer's recovery API, such as
	// https://api.betradar.com/v1/liveodds/.
	APIURL string
}

type producersXML struct {
	XMLName   xml.Name `xml:"producers"`
	Producers []struct {
		ID             string `xml:"id,attr"`
		Name           string `xml:"name,attr"`
		Description    string `xml:"description,attr"`
		APIURL         string `xml:"api_url,attr"`
		Active         string `xml:"active,attr"`
		Scope          string `xml:"scope,attr"`
		StatefulWindow string `xml:"stateful_recovery_window_in_minutes,attr"`
	} `xml:"producer"`
}

// ParseProducerDescriptions reads a producers.xml document. A producer whose id, name,
// api_url, active, scope or stateful_recovery_window_in_minutes cannot be read is an
// error naming the producer and the field: a list with a producer missing would leave
// it unfollowed.
func ParseProducerDescriptions(b []byte) ([]ProducerDescription, error) {
	var x producersXML
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("feedapi: producers: %w", err)
	}
	out := make([]ProducerDescription, 0, len(x.Producers))
	for i, p := range x.Producers {
		bad := func(field, v, want string) error {
			return fmt.Errorf("feedapi: producers: producer %d (id %q): %s %q: want %s", i, p.ID, field, v, want)
		}
		id, err := strconv.Atoi(p.ID)
		if err != nil || id <= 0 {
			return nil, bad("id", p.ID, "a positive integer")
		}
		if p.Name == "" {
			return nil, bad("name", p.Name, "a name")
		}
		active, err := strconv.ParseBool(p.Active)
		if err != nil {
			return nil, bad("active", p.Active, "true or false")
		}
		scope, ok := parseScope(p.Scope)
		if !ok {
			return nil, bad("scope", p.Scope, "live, prematch or virtual, separated by |")
		}
		minutes, err := strconv.Atoi(p.StatefulWindow)
		if err != nil || minutes <= 0 {
			return nil, bad("stateful_recovery_window_in_minutes", p.StatefulWindow, "a positive integer")
		}
		u, err := url.Parse(p.APIURL)
		path := ""
		if err == nil {
			segs := strings.Split(strings.Trim(u.Path, "/"), "/")
			path = segs[len(segs)-1]
		}
		if err != nil || u.Host == "" || path == "" {
			return nil, bad("api_url", p.APIURL, "an absolute URL ending in the producer's path")
		}
		out = append(out, ProducerDescription{
			Producer: feed.Producer{ID: id, Name: p.Name, Description: p.Description, APIPath: path, Scope: scope,
				MaxRecoveryWindow: time.Duration(minutes) * time.Minute, HeartbeatLimit: feed.DefaultHeartbeatLimit(scope)},
			Active: active,
			APIURL: p.APIURL,
		})
	}
	return out, nil
}

// parseScope reads a scope attribute such as "live|prematch".
func parseScope(s string) (feed.Scope, bool) {
	var out feed.Scope
	for w := range strings.SplitSeq(s, "|") {
		switch strings.TrimSpace(w) {
		case "live":
			out |= feed.ScopeLive
		case "prematch":
			out |= feed.ScopePrematch
		case "virtual":
			out |= feed.ScopeVirtual
		default:
			return 0, false
		}
	}
	return out, true
}

// ProducerDescriptions asks the API for the producers and which of them the account
// receives.
func (c *Client) ProducerDescriptions(ctx context.Context) ([]ProducerDescription, error) {
	a, err := c.do(ctx, http.MethodGet, c.s.base.JoinPath("v1", "descriptions", "producers.xml"), maxDescriptionSize)
	if err != nil {
		return nil, fmt.Errorf("feedapi: producers: %w", err)
	}
	return ParseProducerDescriptions(a.body)
}

// Producers returns the producers the account receives (the active ones of
// ProducerDescriptions), each with the heartbeat limit of its scope. It makes the client
// a recovery.ProducerSource: the recovery manager follows these producers.
func (c *Client) Producers(ctx context.Context) ([]feed.Producer, error) {
	descs, err := c.ProducerDescriptions(ctx)
	if err != nil {
		return nil, err
	}
	var out []feed.Producer
	for _, d := range descs {
		if d.Active {
			out = append(out, d.Producer)
		}
	}
	return out, nil
}
