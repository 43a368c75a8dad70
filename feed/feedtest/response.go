package feedtest

import (
	"fmt"
	"net/http"
)

// responseCode is the API's response_code for an HTTP status, one of the values its
// schema allows (UnifiedFeedResponse.xsd): OK, CREATED, ACCEPTED, FORBIDDEN,
// NOT_FOUND, CONFLICT, SERVICE_UNAVAILABLE, NOT_IMPLEMENTED, MOVED_PERMANENTLY,
// BAD_REQUEST. A status the schema has no value of takes the nearest: an unauthorized
// request is FORBIDDEN, too many requests and other server errors SERVICE_UNAVAILABLE,
// any other client error BAD_REQUEST.
func responseCode(status int) string {
	switch status {
	case http.StatusOK:
		return "OK"
	case http.StatusCreated:
		return "CREATED"
	case http.StatusAccepted:
		return "ACCEPTED"
	case http.StatusUnauthorized, http.StatusForbidden:
		return "FORBIDDEN"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "CONFLICT"
	case http.StatusNotImplemented:
		return "NOT_IMPLEMENTED"
	case http.StatusMovedPermanently:
		return "MOVED_PERMANENTLY"
	case http.StatusTooManyRequests:
		return "SERVICE_UNAVAILABLE"
	}
	if status >= 500 {
		return "SERVICE_UNAVAILABLE"
	}
	return "BAD_REQUEST"
}

// writeResponse answers with the API's <response> document: status, its response_code,
// the action (the request's path, as the API names it) and the message.
func writeResponse(w http.ResponseWriter, r *http.Request, status int, message string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+"\n"+
		`<response response_code="%s"><action>%s</action><message>%s</message></response>`,
		responseCode(status), escapeAttr(r.URL.Path), escapeAttr(message))
}

// notFound answers 404 as the API does, with the URL and the reason.
func notFound(w http.ResponseWriter, r *http.Request, msg string) {
	writeResponse(w, r, http.StatusNotFound, msg)
}
