package locks_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// An operator registers a sensor and a client, and links them so that the client is
// told when the lock's state changes.
func ExampleNewHandler() {
	h := locks.NewHandler(locks.NewMemoryStore(0), locks.HandlerOptions{})
	do := func(method, target, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
		out := []string{strconv.Itoa(rec.Code)}
		if loc := rec.Header().Get("Location"); loc != "" {
			out = append(out, "Location: "+loc)
		}
		if body := strings.TrimSpace(rec.Body.String()); body != "" {
			out = append(out, body)
		}
		fmt.Println(strings.Join(out, " "))
	}
	do(http.MethodPost, "/sensors", `{"id":"xa7v9Dfadr7H","address":"Moscow, Russia, Svobody st. 23 fl 1 room 16"}`)
	do(http.MethodPost, "/clients", `{"name":"Front desk","url":"https://desk.example.com/locks"}`)
	do(http.MethodPut, "/sensors/xa7v9Dfadr7H/clients/1", "")
	do(http.MethodGet, "/sensors/xa7v9Dfadr7H/clients", "")
	do(http.MethodGet, "/sensors/xa7v9Dfadr7H/state", "")
	do(http.MethodPost, "/sensors", `{"id":"room-17","address":"Moscow, Russia, Svobody st. 23 fl 1 room 17"}`)
	// Output:
	// 201 Location: /sensors/xa7v9Dfadr7H {"id":"xa7v9Dfadr7H","address":"Moscow, Russia, Svobody st. 23 fl 1 room 16"}
	// 201 Location: /clients/1 {"id":1,"name":"Front desk","url":"https://desk.example.com/locks"}
	// 204
	// 200 {"clients":[{"id":1,"name":"Front desk","url":"https://desk.example.com/locks"}]}
	// 200 {"sensor_id":"xa7v9Dfadr7H","state":null,"lost":false,"sequence":0}
	// 400 {"error":"bad request: id: \"room-17\" has '-': only letters and digits are allowed","fields":[{"field":"id","value":"room-17","problem":"\"room-17\" has '-': only letters and digits are allowed"}]}
}
