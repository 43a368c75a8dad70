package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"sync"

	"github.com/feedkit/feedkit/carousel/carouselhttp"
)

// notifier stands in for the system the carousel republishes to: it accepts every POST
// and counts what it received, by origin and by item. It reads each publication's
// identity from the headers (cycle, iteration, position) as a consumer that deduplicates
// would: an item received again in the same iteration of its cycle, by another request
// than a retry of the first, is a republication after a restart or a failover.
type notifier struct {
	mu       sync.Mutex
	got      receipt
	items    map[string]int      // "collection/id" → times received
	last     map[string]received // "cycle/collection/id" → its last publication
	byOrigin map[string]int
}

// received is a publication as the notifier remembers it.
type received struct {
	iteration int
	requestID string
}

// receipt is what the notifier received.
type receipt struct {
	total    int
	distinct int // items
	repeated int // items received again in the same iteration of their cycle
	bad      int // requests without the origin or the identity headers, or with a body it could not read
	byOrigin map[string]int
}

func newNotifier() *notifier {
	return &notifier{items: map[string]int{}, last: map[string]received{}, byOrigin: map[string]int{}}
}

func (n *notifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Collection string `json:"collection"`
		ID         string `json:"id"`
	}
	origin, cycle := r.Header.Get("X-Origin-System-Id"), r.Header.Get(carouselhttp.CycleHeader)
	iteration, iterErr := strconv.Atoi(r.Header.Get(carouselhttp.IterationHeader))
	position, posErr := strconv.Atoi(r.Header.Get(carouselhttp.PositionHeader))
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body)
	n.mu.Lock()
	defer n.mu.Unlock()
	if r.Method != http.MethodPost || origin == "" || cycle == "" || iterErr != nil || iteration < 1 ||
		posErr != nil || position < 1 || err != nil || body.ID == "" {
		n.got.bad++
		http.Error(w, "want a POST with X-Origin-System-Id, X-Carousel-Cycle, -Iteration and -Position, "+
			"and a JSON body with an id", http.StatusBadRequest)
		return
	}
	n.got.total++
	n.byOrigin[origin]++
	n.items[body.Collection+"/"+body.ID]++
	key, this := cycle+"/"+body.Collection+"/"+body.ID, received{iteration, r.Header.Get(carouselhttp.RequestIDHeader)}
	if prev, ok := n.last[key]; ok && prev.iteration == iteration && prev.requestID != this.requestID {
		n.got.repeated++
	}
	n.last[key] = this
	w.WriteHeader(http.StatusAccepted)
}

// counts returns what the notifier received.
func (n *notifier) counts() receipt {
	n.mu.Lock()
	defer n.mu.Unlock()
	got := n.got
	got.distinct = len(n.items)
	got.byOrigin = maps.Clone(n.byOrigin)
	return got
}
