package feed

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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
}

type whoamiXML struct {
	XMLName     xml.Name `xml:"bookmaker_details"`
	BookmakerID string   `xml:"bookmaker_id,attr"`
	VirtualHost string   `xml:"virtual_host,attr"`
	ExpireAt    string   `xml:"expire_at,attr"`
	Message     string   `xml:"message"`
}

// ParseBookmakerDetails reads a whoami.xml document. A missing or malformed bookmaker_id
// or virtual_host is an error naming the field; expire_at is optional.
func ParseBookmakerDetails(b []byte) (BookmakerDetails, error) {
	var x whoamiXML
	if err := xml.Unmarshal(b, &x); err != nil {
		return BookmakerDetails{}, fmt.Errorf("feed: whoami: %w", err)
	}
	id, err := strconv.Atoi(x.BookmakerID)
	if err != nil || id <= 0 {
		return BookmakerDetails{}, fmt.Errorf("feed: whoami: bookmaker_id %q is not a positive integer", x.BookmakerID)
	}
	if x.VirtualHost == "" {
		return BookmakerDetails{}, fmt.Errorf("feed: whoami: virtual_host is empty")
	}
	d := BookmakerDetails{BookmakerID: id, VirtualHost: x.VirtualHost}
	if x.ExpireAt != "" {
		if d.ExpireAt, err = time.Parse(time.RFC3339, x.ExpireAt); err != nil {
			return BookmakerDetails{}, fmt.Errorf("feed: whoami: expire_at %q is not an RFC 3339 time", x.ExpireAt)
		}
	}
	return d, nil
}

// WhoAmI asks the API whose the access token is. A refused token is an *APIError that
// matches ErrUnauthorized (401) or ErrForbidden (403).
func (c *RecoveryClient) WhoAmI(ctx context.Context) (BookmakerDetails, error) {
	body, err := c.do(ctx, http.MethodGet, c.base.JoinPath("v1", "users", "whoami.xml"), maxDescriptionSize)
	if err != nil {
		return BookmakerDetails{}, fmt.Errorf("feed: whoami: %w", err)
	}
	return ParseBookmakerDetails(body)
}

// ProducerDescription is a producer as the API describes it to an account
// (GET /v1/descriptions/producers.xml).
type ProducerDescription struct {
	// Producer holds the id, name, description, scope, recovery window (the API's
	// stateful recovery window) and APIPath (the last segment of APIURL); its
	// HeartbeatLimit is DefaultHeartbeatLimit of its scope.
	Producer
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
		return nil, fmt.Errorf("feed: producers: %w", err)
	}
	out := make([]ProducerDescription, 0, len(x.Producers))
	for i, p := range x.Producers {
		bad := func(field, v, want string) error {
			return fmt.Errorf("feed: producers: producer %d (id %q): %s %q: want %s", i, p.ID, field, v, want)
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
			Producer: Producer{ID: id, Name: p.Name, Description: p.Description, APIPath: path, Scope: scope,
				MaxRecoveryWindow: time.Duration(minutes) * time.Minute, HeartbeatLimit: DefaultHeartbeatLimit(scope)},
			Active: active,
			APIURL: p.APIURL,
		})
	}
	return out, nil
}

// parseScope reads a scope attribute such as "live|prematch".
func parseScope(s string) (Scope, bool) {
	var out Scope
	for w := range strings.SplitSeq(s, "|") {
		switch strings.TrimSpace(w) {
		case "live":
			out |= ScopeLive
		case "prematch":
			out |= ScopePrematch
		case "virtual":
			out |= ScopeVirtual
		default:
			return 0, false
		}
	}
	return out, true
}

// ProducerDescriptions asks the API for the producers and which of them the account
// receives.
func (c *RecoveryClient) ProducerDescriptions(ctx context.Context) ([]ProducerDescription, error) {
	body, err := c.do(ctx, http.MethodGet, c.base.JoinPath("v1", "descriptions", "producers.xml"), maxDescriptionSize)
	if err != nil {
		return nil, fmt.Errorf("feed: producers: %w", err)
	}
	return ParseProducerDescriptions(body)
}
