package recording

import (
	"strconv"
	"time"
)

// Kind is what a Frame records.
type Kind uint8

const (
	// Delivery is a message the feed delivered: RoutingKey, Body, Session, At.
	Delivery Kind = 1
	// APIResponse is an answer of the feed's API: Method, URL, Status, Body, At.
	APIResponse Kind = 2
)

func (k Kind) String() string {
	switch k {
	case Delivery:
		return "delivery"
	case APIResponse:
		return "api_response"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Frame is one recorded delivery or API response.
type Frame struct {
	Kind Kind
	// At is when the SDK received it, on its clock (to the nanosecond, in UTC).
	At time.Time
	// Session is the index of the session that received a delivery.
	Session int
	// RoutingKey is a delivery's routing key as received.
	RoutingKey string
	// Method, URL and Status are an API response's request and status.
	Method string
	URL    string
	Status int
	// Body is the delivery's or the response's body, as received.
	Body []byte
}
