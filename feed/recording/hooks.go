package recording

import (
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
)

// RecordDelivery records a message as a session received it. Its signature is the SDK's
// Config.OnDelivery (and feed.SessionConfig's), so that a Writer records a live SDK:
//
//	cfg.OnDelivery = w.RecordDelivery
//	cfg.API.OnResponse = w.RecordResponse
//
// A hook has no error to return: the first write error stops the recording, and Err
// returns it.
func (w *Writer) RecordDelivery(session feed.SessionRef, d feed.Delivery) {
	_ = w.Append(deliveryFrame(session, d))
}

func deliveryFrame(session feed.SessionRef, d feed.Delivery) Frame {
	return Frame{Kind: Delivery, At: d.ReceivedAt, Session: session.Index, RoutingKey: d.RoutingKey, Body: d.Body}
}

// RecordResponse records an answer of the feed's API, or an attempt that got none
// (Status 0). Its signature is feedapi.Config.OnResponse's.
func (w *Writer) RecordResponse(r feedapi.Response) { _ = w.Append(responseFrame(r)) }

func responseFrame(r feedapi.Response) Frame {
	return Frame{Kind: APIResponse, At: r.SentAt.Add(r.Duration), Method: r.Method, URL: r.URL, Status: r.StatusCode, Body: r.Body}
}

// Err returns the write error that stopped the recording, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
