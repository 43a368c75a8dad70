package jsonapi

import (
	"fmt"
	"net/http"
)

// ProtectCrossOrigin returns h behind http.CrossOriginProtection: a browser's
// cross-origin POST, PUT, PATCH or DELETE is answered through fail with a 403 whose
// message ends with who, saying who may make changes instead. The APIs have no
// authentication of their own, so a page on another site that an operator's browser
// shows must not be able to change anything through them. Reads, same-origin pages and
// clients that are not browsers (they send neither Origin nor Sec-Fetch-Site) are let
// through.
func ProtectCrossOrigin(h http.Handler, fail ErrorFunc, who string) http.Handler {
	csrf := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := csrf.Check(r); err != nil {
			fail(w, r, &Error{Status: http.StatusForbidden, Message: fmt.Sprintf("%v: %s", err, who), Err: err})
			return
		}
		h.ServeHTTP(w, r)
	})
}
