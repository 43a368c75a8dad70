// Package jsonapi is the plumbing that feedkit's small operator APIs share (carousel's,
// and the locksensors example's), so that both answer alike and a fix to one is a fix
// to both:
//
//   - Mux dispatches on the method itself, so that a wrong method is a JSON 405 with an
//     Allow header, and answers every unknown path with a JSON 404, where
//     http.ServeMux would answer both in plain text;
//   - a handler returns its error instead of writing it, so that each API maps errors to
//     statuses in one place, its ErrorFunc;
//   - Error carries the status and the text an error is answered with, and the bad
//     fields of a request as FieldErrors; WriteError writes it as
//     {"error": "...", "fields": [{"field", "value", "problem"}]};
//   - WriteJSON writes an answer, and DecodeBody reads a request body strictly: at most
//     MaxBody bytes (413 beyond), one JSON value, no unknown fields, nothing after it;
//   - ProtectCrossOrigin refuses a browser's cross-origin change (CSRF) with a JSON 403.
//
// What an API's own errors mean (which is a 404, which a 409, what a 500 may reveal) is
// the API's business: this package decides only about the errors it makes itself.
package jsonapi
