//go:build crash

package carousel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouselhttp"
	"github.com/feedkit/feedkit/internal/crashtest"
)

// The crash tests of the carousel (crash_file_test.go, crash_pg_test.go) and what they
// share: the cycles the children run, the receiver in the parent that records every
// publication they make, and the accounting at the end.
//
// A child runs a Scheduler whose cycles publish through a carouselhttp.Publisher to the
// receiver, at a URL naming the child's life (its name and start number); its toggle
// tells the receiver of every activation before the scheduler acts on it. The record
// is the parent's, so a kill loses none of it: every publication received, with its
// identity (cycle, iteration, position), its item and its X-Request-Id, and every
// activation, in the order they came.
//
// The environment the parent gives its children.
const (
	crashItemsVar    = "FEEDKIT_CRASH_CAROUSEL_ITEMS"    // items per collection (default crashItems)
	crashReceiverVar = "FEEDKIT_CRASH_CAROUSEL_RECEIVER" // the receiver's base URL
	crashNameVar     = "FEEDKIT_CRASH_CAROUSEL_NAME"     // the instance's name
)

const (
	crashItems = 2000
	crashKills = 8
	// crashIterations is how many iterations every cycle completes before the end.
	crashIterations = 2
	crashThrottle   = 5 * time.Millisecond
	crashCheckpoint = time.Second
	// crashCheckpointItems is the most items of a cycle an activation can publish past
	// its last saved progress, and so what the next activation may publish again: the
	// publishes keep to the throttle, a token bucket of one, so that at most
	// crashCheckpoint/crashThrottle begin within the checkpoint interval after a save;
	// the first to end past the interval saves, and it may have begun past it too. A
	// kill before that save commits leaves them all to be published again.
	crashCheckpointItems = int(crashCheckpoint/crashThrottle) + 1
	crashOrigin          = "crashtest"
	// crashDeadline bounds a run: only a hang comes near it.
	crashDeadline = 10 * time.Minute
)

// crashCycles are the cycles every child runs: two whole collections at the throttle.
// The collections' names are valid PostgreSQL table names, the pg test's tables.
var crashCycles = []carousel.CycleConfig{
	{Name: "crash-alpha", Type: carousel.ThrottledWholeCollection, Origin: crashOrigin, Collection: "crash_items_a",
		CoolDown: time.Second, Throttle: crashThrottle},
	{Name: "crash-beta", Type: carousel.ThrottledWholeCollection, Origin: crashOrigin, Collection: "crash_items_b",
		CoolDown: time.Second, Throttle: crashThrottle},
}

// crashIDs returns the ids of collection's n items, in the order of a whole collection.
func crashIDs(collection string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%05d", collection, i)
	}
	slices.Sort(ids)
	return ids
}

// crashItemList returns collection's n items, each modified at crashModified.
func crashItemList(collection string, n int) []carousel.Item {
	ids := crashIDs(collection, n)
	items := make([]carousel.Item, n)
	for i, id := range ids {
		items[i] = carousel.Item{ID: id, Modified: crashModified}
	}
	return items
}

// crashModified is every item's modification time.
var crashModified = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// crashChildItems returns the number of items per collection the parent chose.
func crashChildItems(t *testing.T) int {
	n, err := strconv.Atoi(os.Getenv(crashItemsVar))
	require.NoError(t, err, crashItemsVar)
	return n
}

// crashChildRun runs a child's scheduler over src, saving its progress in store, active
// as toggle says, until ctx ends; then it shuts the cycles down, saving their progress.
func crashChildRun(ctx context.Context, t *testing.T, src carousel.Source, store carousel.MetadataStore,
	toggle carousel.Toggle, toggleInterval time.Duration) {
	base := os.Getenv(crashReceiverVar)
	life := fmt.Sprintf("%s/%d", os.Getenv(crashNameVar), crashtest.StartNumber())
	pub, err := carouselhttp.NewPublisher(carouselhttp.PublisherConfig{URL: base + "/publish/" + life})
	require.NoError(t, err)
	s, err := carousel.NewScheduler(src, pub, carousel.Config{Store: store,
		Toggle: &crashReportingToggle{inner: toggle, url: base + "/activation/" + life}, ToggleInterval: toggleInterval,
		CheckpointInterval: crashCheckpoint,
		Logger:             slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	require.NoError(t, err)
	for _, cfg := range crashCycles {
		require.NoError(t, s.Add(ctx, cfg))
	}
	crashtest.Ready()
	if err := s.Run(ctx); err != nil {
		t.Errorf("shutting the cycles down: %v", err)
	}
}

// crashReportingToggle is the child's toggle: inner's answers, and before the first
// active answer of each activation (the first after a passive one or an error, or with
// a new generation, which is when the scheduler starts its cycles) it tells the
// receiver, numbering the activations of the life. An activation the receiver was not
// told of is not made: the answer is then an error, and the next call tells it again
// under the same number.
type crashReportingToggle struct {
	inner carousel.Toggle
	url   string

	mu     sync.Mutex
	active bool
	gen    carousel.Generation
	seq    int // the activations reported
}

func (r *crashReportingToggle) Active(ctx context.Context) (bool, carousel.Generation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	active, gen, err := r.inner.Active(ctx)
	if err != nil || !active {
		r.active = false
		return active, gen, err
	}
	if r.active && gen == r.gen {
		return true, gen, nil
	}
	// Not bounded by ctx, the scheduler's question's: a report cut short after the
	// receiver took it would be told again under the same number, and counted once.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	url := fmt.Sprintf("%s?seq=%d&gen=%d", r.url, r.seq+1, gen)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, nil)
	if err != nil {
		return false, 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.active = false
		return false, 0, fmt.Errorf("reporting the activation: %w", err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		r.active = false
		return false, 0, fmt.Errorf("reporting the activation: status %d", res.StatusCode)
	}
	r.active, r.gen = true, gen
	r.seq++
	return true, gen, nil
}

// crashLife is one life of a child: its name and start number.
type crashLife struct {
	name  string
	start int
}

func (l crashLife) String() string { return fmt.Sprintf("%s#%d", l.name, l.start) }

// crashKey is a publication's identity.
type crashKey struct {
	cycle               string
	iteration, position int
}

// crashEvent is a receipt: a publication, or an activation's report.
type crashEvent struct {
	life       crashLife
	activation bool
	// An activation's.
	seq int
	gen carousel.Generation
	// A publication's.
	key       crashKey
	id        string
	requestID string
}

// crashReceiver is the parent's HTTP endpoint, recording what the children send. Its
// record survives their kills. Waiters are woken at every receipt.
type crashReceiver struct {
	srv   *httptest.Server
	items map[string][]string // cycle → its collection's ids, in order

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every receipt
	events   []crashEvent
	seen     map[crashKey]bool
	reported map[crashLife]int                 // the last activation reported by each life
	lastGen  map[crashLife]carousel.Generation // and its generation
	lastLife crashLife                         // the life of the last activation reported
	progress int                               // publications received first, of iterations up to crashIterations
	distinct map[string]map[int]int            // cycle → iteration → positions received
	bad      []string
}

func newCrashReceiver(t *testing.T, n int) *crashReceiver {
	r := &crashReceiver{items: map[string][]string{}, changed: make(chan struct{}), seen: map[crashKey]bool{},
		reported: map[crashLife]int{}, lastGen: map[crashLife]carousel.Generation{}, distinct: map[string]map[int]int{}}
	for _, c := range crashCycles {
		r.items[c.Name] = crashIDs(c.Collection, n)
		r.distinct[c.Name] = map[int]int{}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /publish/{name}/{start}", r.publish)
	mux.HandleFunc("POST /activation/{name}/{start}", r.activation)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// life reads the child's life from the request's path.
func crashRequestLife(req *http.Request) (crashLife, error) {
	start, err := strconv.Atoi(req.PathValue("start"))
	if err != nil || start < 1 {
		return crashLife{}, fmt.Errorf("start %q", req.PathValue("start"))
	}
	return crashLife{name: req.PathValue("name"), start: start}, nil
}

// publish records a publication: its identity from the headers, which must agree with
// the default JSON body, and its item, which must be the item at its position.
func (r *crashReceiver) publish(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Cycle      string `json:"cycle"`
		Origin     string `json:"origin"`
		Collection string `json:"collection"`
		ID         string `json:"id"`
		Iteration  int    `json:"iteration"`
		Position   int    `json:"position"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<16)).Decode(&body); err != nil {
		// Cut off by a kill while sending: the child never completed the publish.
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	life, err := crashRequestLife(req)
	h := req.Header
	iteration, iterErr := strconv.Atoi(h.Get(carouselhttp.IterationHeader))
	position, posErr := strconv.Atoi(h.Get(carouselhttp.PositionHeader))
	ev := crashEvent{life: life, key: crashKey{h.Get(carouselhttp.CycleHeader), iteration, position}, id: body.ID,
		requestID: h.Get(carouselhttp.RequestIDHeader)}
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, known := r.items[ev.key.cycle]
	var problem string
	switch {
	case err != nil:
		problem = err.Error()
	case !known || iterErr != nil || posErr != nil || iteration < 1 || position < 1 || position > len(ids):
		problem = "identity headers"
	case body.Cycle != ev.key.cycle || body.Iteration != iteration || body.Position != position:
		problem = "body and headers disagree"
	case h.Get("X-Origin-System-Id") != crashOrigin || body.Origin != crashOrigin:
		problem = "origin"
	case ev.requestID == "":
		problem = "no request id"
	case ids[position-1] != body.ID:
		problem = fmt.Sprintf("item %q at position %d, want %q", body.ID, position, ids[position-1])
	case r.reported[life] == 0:
		problem = "a publication before its life's first activation"
	}
	if problem != "" {
		r.bad = append(r.bad, fmt.Sprintf("%s %v %v: %s", req.URL.Path, h, body, problem))
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	r.events = append(r.events, ev)
	if !r.seen[ev.key] {
		r.seen[ev.key] = true
		r.distinct[ev.key.cycle][iteration]++
		if iteration <= crashIterations {
			r.progress++
		}
	}
	r.wakeLocked()
}

// activation records an activation's report.
func (r *crashReceiver) activation(w http.ResponseWriter, req *http.Request) {
	life, err := crashRequestLife(req)
	seq, seqErr := strconv.Atoi(req.URL.Query().Get("seq"))
	gen, genErr := strconv.ParseUint(req.URL.Query().Get("gen"), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || seqErr != nil || genErr != nil || seq < 1 {
		r.bad = append(r.bad, fmt.Sprintf("activation %s: bad report", req.URL))
		http.Error(w, "bad report", http.StatusBadRequest)
		return
	}
	switch last := r.reported[life]; {
	case seq == last: // told again after a reply that did not arrive
	case seq == last+1:
		r.reported[life], r.lastGen[life], r.lastLife = seq, carousel.Generation(gen), life
		r.events = append(r.events, crashEvent{life: life, activation: true, seq: seq, gen: carousel.Generation(gen)})
		r.wakeLocked()
	default:
		r.bad = append(r.bad, fmt.Sprintf("activation %s: after %d", req.URL, last))
		http.Error(w, "out of sequence", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (r *crashReceiver) wakeLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// env returns the children's environment for the receiver.
func (r *crashReceiver) env(n int) []string {
	return []string{crashReceiverVar + "=" + r.srv.URL, crashItemsVar + "=" + strconv.Itoa(n)}
}

// await waits until cond, called under the receiver's lock, holds: woken by every
// receipt, until ctx ends, one of procs exits (the harness fails the test then), or a
// request is bad.
func (r *crashReceiver) await(ctx context.Context, what string, procs []*crashtest.Process, cond func() bool) error {
	exited := make(chan *crashtest.Process, len(procs))
	stop := make(chan struct{})
	defer close(stop)
	for _, p := range procs {
		done := p.Done()
		go func() {
			select {
			case <-done:
				exited <- p
			case <-stop:
			}
		}()
	}
	for {
		r.mu.Lock()
		ok, bad := cond(), slices.Clone(r.bad)
		changed := r.changed
		r.mu.Unlock()
		if len(bad) > 0 {
			return fmt.Errorf("%s: %d bad requests, the first: %s", what, len(bad), bad[0])
		}
		if ok {
			return nil
		}
		select {
		case <-changed:
		case p := <-exited:
			return fmt.Errorf("%s: %s exited (start %d): %v", what, p.Name(), p.Starts(), p.Err())
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
	}
}

// lastPublisherLocked returns the life of the last publication received.
func (r *crashReceiver) lastPublisherLocked() (crashLife, bool) {
	for i := len(r.events) - 1; i >= 0; i-- {
		if !r.events[i].activation {
			return r.events[i].life, true
		}
	}
	return crashLife{}, false
}

// awaitWork waits until the publications received first, of the iterations up to
// crashIterations, reach share of them all, and the last thing received is a
// publication of a life of procs that is running now: the work has gone on since the
// last kill or activation, so that the next kill lands under load, and the last
// publisher is the active instance.
func (r *crashReceiver) awaitWork(ctx context.Context, share float64, procs []*crashtest.Process) error {
	target := int(share * float64(len(crashCycles)*crashIterations*len(r.items[crashCycles[0].Name])))
	current := crashLives(procs)
	return r.await(ctx, fmt.Sprintf("%d publications", target), procs, func() bool {
		if len(r.events) == 0 || r.progress < target {
			return false
		}
		last := r.events[len(r.events)-1]
		return !last.activation && current[last.life]
	})
}

// activePublisher returns the process of procs that made the last publication.
func (r *crashReceiver) activePublisher(procs []*crashtest.Process) *crashtest.Process {
	r.mu.Lock()
	last, ok := r.lastPublisherLocked()
	r.mu.Unlock()
	for _, p := range procs {
		if ok && p.Name() == last.name && p.Starts() == last.start {
			return p
		}
	}
	return nil
}

// awaitActivation waits until a life of procs running now has reported an activation
// of generation gen as its last.
func (r *crashReceiver) awaitActivation(ctx context.Context, gen carousel.Generation, procs []*crashtest.Process) error {
	current := crashLives(procs)
	return r.await(ctx, fmt.Sprintf("the activation of generation %d", gen), procs, func() bool {
		for life := range current {
			if r.reported[life] > 0 && r.lastGen[life] == gen {
				return true
			}
		}
		return false
	})
}

// awaitTakeover waits until the last activation reported is of a life of procs
// running now.
func (r *crashReceiver) awaitTakeover(ctx context.Context, procs []*crashtest.Process) error {
	current := crashLives(procs)
	return r.await(ctx, "a takeover", procs, func() bool { return current[r.lastLife] })
}

// awaitComplete waits until every cycle has completed crashIterations iterations. An
// iteration left incomplete once the next has begun is never completed (the cycle
// ended it): it fails at once, rather than when the deadline ends the wait.
func (r *crashReceiver) awaitComplete(ctx context.Context, procs []*crashtest.Process) error {
	var skipped error
	err := r.await(ctx, "every cycle's iterations", procs, func() bool {
		done := true
		for _, c := range crashCycles {
			n, last := len(r.items[c.Name]), 0
			for it := range r.distinct[c.Name] {
				last = max(last, it)
			}
			for it := 1; it <= max(last, crashIterations); it++ {
				switch got := r.distinct[c.Name][it]; {
				case got == n:
				case it < last:
					skipped = fmt.Errorf("%s iteration %d ended with %d of %d positions received", c.Name, it, got, n)
					return true
				case it <= crashIterations:
					done = false
				}
			}
		}
		return done
	})
	if err != nil {
		return err
	}
	return skipped
}

// crashLives returns the lives procs are running now.
func crashLives(procs []*crashtest.Process) map[crashLife]bool {
	lives := map[crashLife]bool{}
	for _, p := range procs {
		lives[crashLife{p.Name(), p.Starts()}] = true
	}
	return lives
}

// crashShares returns kills shares of the work drawn from rng, sorted, each between 2 %
// and 90 %: every kill lands while there is work left.
func crashShares(rng *rand.Rand, kills int) []float64 {
	shares := make([]float64, kills)
	for i := range shares {
		shares[i] = 0.02 + 0.88*rng.Float64()
	}
	slices.Sort(shares)
	return shares
}

// crashActivation is an activation as the accounting sees it.
type crashActivation struct {
	life crashLife
	seq  int
	gen  carousel.Generation
}

// crashTally is the record, counted.
type crashTally struct {
	activations []crashActivation // in the order reported
	// republished counts the publications received again, per activation (in the
	// order of activations) and cycle: a publication of a key received before, in
	// another request than the first's (an HTTP retry shares the first's request id),
	// counts to the activation of its life reported last before it.
	republished []map[string]int
	// lastPosition is each cycle's last (iteration, position) received.
	lastPosition map[string]crashKey
}

// crashAccount checks the record once the children have stopped, and sets the counts
// in c: every cycle's iterations each publish their collection whole, in order, every
// position from 1 with no gap, each item at its position; every iteration but the last
// complete; the publications received again, in all and per activation, within one
// checkpoint interval's items per activation after the first, per cycle. It returns the
// tally for the test's own checks.
func crashAccount(t *testing.T, r *crashReceiver, c *crashtest.Counts) crashTally {
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Empty(t, r.bad[:min(len(r.bad), 10)], "bad requests (%d, the first 10)", len(r.bad))
	c.Set("bad_requests", len(r.bad))

	var tally crashTally
	tally.lastPosition = map[string]crashKey{}
	current := map[crashLife]int{} // life → index of its last activation
	requests := map[crashKey]map[string]bool{}
	received := 0
	for _, ev := range r.events {
		if ev.activation {
			current[ev.life] = len(tally.activations)
			tally.activations = append(tally.activations, crashActivation{life: ev.life, seq: ev.seq, gen: ev.gen})
			tally.republished = append(tally.republished, map[string]int{})
			continue
		}
		received++
		reqs := requests[ev.key]
		if reqs == nil {
			reqs = map[string]bool{}
			requests[ev.key] = reqs
		}
		if !reqs[ev.requestID] {
			if len(reqs) > 0 {
				tally.republished[current[ev.life]][ev.key.cycle]++
			}
			reqs[ev.requestID] = true
		}
		if last := tally.lastPosition[ev.key.cycle]; ev.key.iteration > last.iteration ||
			ev.key.iteration == last.iteration && ev.key.position > last.position {
			tally.lastPosition[ev.key.cycle] = ev.key
		}
	}

	published, republished, complete := 0, 0, 0
	for _, cy := range crashCycles {
		ids := r.items[cy.Name]
		last := tally.lastPosition[cy.Name]
		require.GreaterOrEqual(t, last.iteration, crashIterations, "%s: iterations", cy.Name)
		for it := 1; it <= last.iteration; it++ {
			positions, again := 0, 0
			items := map[string]bool{}
			for pos := 1; pos <= len(ids); pos++ {
				reqs := requests[crashKey{cy.Name, it, pos}]
				if len(reqs) == 0 {
					continue
				}
				positions = pos
				items[ids[pos-1]] = true
				published += len(reqs)
				again += len(reqs) - 1
			}
			// Every position up to the last received: none skipped.
			assert.Equal(t, positions, len(items), "%s iteration %d: positions 1 to %d, each received", cy.Name, it, positions)
			if it < last.iteration || it <= crashIterations {
				assert.Len(t, items, len(ids), "%s iteration %d: every item published", cy.Name, it)
			}
			if len(items) == len(ids) {
				complete++
			}
			republished += again
		}
		perCycle := 0
		for _, m := range tally.republished {
			perCycle += m[cy.Name]
		}
		c.Set("republished_"+strings.TrimPrefix(cy.Name, "crash-"), perCycle)
	}
	activations := len(tally.activations)
	bound := len(crashCycles) * crashCheckpointItems * max(activations-1, 0)
	most := 0
	for i, m := range tally.republished {
		for cycle, n := range m {
			most = max(most, n)
			assert.LessOrEqual(t, n, crashCheckpointItems, "%s: activation %d (%s, %d of its life) republished %d",
				cycle, i+1, tally.activations[i].life, tally.activations[i].seq, n)
		}
	}
	if activations > 0 {
		assert.Zero(t, tally.republishedBy(0), "the first activation republished nothing")
	}

	c.Set("cycles", len(crashCycles))
	c.Set("items", len(r.items[crashCycles[0].Name]))
	c.Set("complete_iterations", complete)
	c.Set("received", received)
	c.Set("published", published)
	c.Set("http_retries", received-published)
	c.Set("republished", republished)
	c.Set("republished_most_per_activation_and_cycle", most)
	c.Set("checkpoint_items", crashCheckpointItems)
	c.Set("bound", bound)
	assert.LessOrEqual(t, republished, bound,
		"republished within %d items per cycle per activation after the first (%d activations)", crashCheckpointItems, activations)
	return tally
}

// republishedBy returns what activation i republished, over every cycle.
func (t crashTally) republishedBy(i int) int {
	n := 0
	for _, v := range t.republished[i] {
		n += v
	}
	return n
}

// crashCheckSaved checks the progress the store holds at the end against the record:
// the children stopped cleanly, each cycle saving on its way out, so that it is the
// last position received, or the one before when the stop cut that publish short
// after the receiver had it, or the next iteration's start when the last ended.
func crashCheckSaved(t *testing.T, r *crashReceiver, tally crashTally, store carousel.MetadataStore) {
	for _, cy := range crashCycles {
		m, ok, err := store.Load(t.Context(), cy.Name)
		require.NoError(t, err)
		require.True(t, ok, "%s saved", cy.Name)
		last, ids := tally.lastPosition[cy.Name], r.items[cy.Name]
		switch {
		case m.Iteration == last.iteration:
			assert.Contains(t, []int{last.position, last.position - 1}, m.Completed,
				"%s: saved %d completed of iteration %d; the last received was position %d", cy.Name, m.Completed, m.Iteration, last.position)
		default:
			assert.Equal(t, last.iteration+1, m.Iteration, "%s: saved iteration", cy.Name)
			assert.Equal(t, len(ids), last.position, "%s: the last iteration received was complete", cy.Name)
			assert.Zero(t, m.Completed, "%s: completed of the iteration begun", cy.Name)
		}
		if m.InProgress && m.Completed > 0 {
			assert.Equal(t, ids[m.Completed-1], m.Last.ID, "%s: the saved last item is at the saved position", cy.Name)
		}
		assert.Zero(t, m.Errors, "%s: publish errors", cy.Name)
	}
}
