package main

import (
	"encoding/json"
	"net/http"
	"sync"
)

// notifier stands in for the system the carousel republishes to: it accepts every POST
// and counts what it received, by origin and by item.
type notifier struct {
	mu       sync.Mutex
	total    int
	byOrigin map[string]int
	items    map[string]int // "collection/id" → times received
	bad      int            // requests without the origin header or with a body it could not read
}

func newNotifier() *notifier {
	return &notifier{byOrigin: map[string]int{}, items: map[string]int{}}
}

func (n *notifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Collection string `json:"collection"`
		ID         string `json:"id"`
	}
	origin := r.Header.Get("X-Origin-System-Id")
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body)
	n.mu.Lock()
	defer n.mu.Unlock()
	if r.Method != http.MethodPost || origin == "" || err != nil || body.ID == "" {
		n.bad++
		http.Error(w, "want a POST with X-Origin-System-Id and a JSON body with an id", http.StatusBadRequest)
		return
	}
	n.total++
	n.byOrigin[origin]++
	n.items[body.Collection+"/"+body.ID]++
	w.WriteHeader(http.StatusAccepted)
}

// counts returns what the notifier received.
func (n *notifier) counts() (total, distinct, bad int, byOrigin map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	byOrigin = make(map[string]int, len(n.byOrigin))
	for k, v := range n.byOrigin {
		byOrigin[k] = v
	}
	return n.total, len(n.items), n.bad, byOrigin
}
