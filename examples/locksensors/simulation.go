package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// simulation plays sensors that send readings, one of which falls silent until the
// service has found it lost, and two clients: a security desk that accepts everything and
// a facility app that fails its first requests.
type simulation struct {
	svc      *service
	pub      publisher
	sensors  []locks.SensorID
	silent   locks.SensorID
	security *webhook
	facility *webhook
	stop     context.CancelFunc
	wg       sync.WaitGroup

	mu         sync.Mutex
	readings   int
	changes    int
	bad        int
	silenced   bool // the silent sensor was found lost, and has been heard again
	lastState  map[locks.SensorID]int
	publishErr error
}

// demoIDs are sample sensor ids, one of each shape a sensor id may take (see
// locks.SensorID); more are made up after them.
var demoIDs = []locks.SensorID{"xa7v9Dfadr7H", "0xA", "TestSensor", "0123456789aBcDeF"}

// startSimulation registers the sensors and clients and starts sending readings.
func startSimulation(ctx context.Context, svc *service, o options, out io.Writer) (*simulation, error) {
	sim := &simulation{svc: svc, lastState: map[locks.SensorID]int{}}
	var err error
	if sim.security, err = startWebhook("Security desk", 0); err != nil {
		return nil, err
	}
	if sim.facility, err = startWebhook("Facility app", 3); err != nil {
		sim.security.close()
		return nil, err
	}
	for i := range max(o.sensors, 2) {
		id := fmt.Sprintf("Door%02d", i)
		if i < len(demoIDs) {
			id = string(demoIDs[i])
		}
		sim.sensors = append(sim.sensors, locks.SensorID(id))
	}
	sim.silent = sim.sensors[len(sim.sensors)-1]
	if err := sim.register(ctx); err != nil {
		sim.closeHooks()
		return nil, fmt.Errorf("simulation: register: %w", err)
	}
	if sim.pub, err = svc.newPublisher(ctx); err != nil {
		sim.closeHooks()
		return nil, fmt.Errorf("simulation: %w", err)
	}
	fmt.Fprintf(out, "Simulating %d sensors, each sending a reading every %v, and %d bad messages that the service must refuse (it logs each as a warning).\n",
		len(sim.sensors), o.every, len(badMessages))
	fmt.Fprintf(out, "%s falls silent after 1s, until the service reports it lost (after %v without a reading).\n", sim.silent, o.silence)
	for _, h := range []*webhook{sim.security, sim.facility} {
		fmt.Fprintf(out, "Client %d, %s, at %s, linked to %s", h.client, h.name, h.url, sensors(len(sim.linked(h)), len(sim.sensors)))
		if h.failFirst > 0 {
			fmt.Fprintf(out, "; it answers its first %d requests with 503, so that you see retries", h.failFirst)
		}
		fmt.Fprintln(out, ".")
	}

	ctx, sim.stop = context.WithCancel(ctx)
	sim.wg.Go(func() { sim.play(ctx, o) })
	return sim, nil
}

// register creates the sensors, the two clients (or points existing ones at this run's
// webhooks) and links them: every sensor to the security desk, every other one to the
// facility app.
func (sim *simulation) register(ctx context.Context) error {
	st := sim.svc.store
	for i, id := range sim.sensors {
		err := st.CreateSensor(ctx, locks.Sensor{ID: id, Address: fmt.Sprintf("Moscow, Russia, Svobody st. 23 fl 1 room %d", 16+i)})
		if err != nil && !errors.Is(err, locks.ErrExists) {
			return err
		}
	}
	existing, err := st.ListClients(ctx, 0, 1000)
	if err != nil {
		return err
	}
	for _, h := range []*webhook{sim.security, sim.facility} {
		c := locks.Client{Name: h.name, URL: h.url}
		if i := slices.IndexFunc(existing, func(e locks.Client) bool { return e.Name == h.name }); i >= 0 {
			c.ID = existing[i].ID
			err = st.UpdateClient(ctx, c)
		} else {
			c, err = st.CreateClient(ctx, c)
		}
		if err != nil {
			return err
		}
		h.client = c.ID
		for _, id := range sim.linked(h) {
			if err := st.Link(ctx, id, c.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// linked returns the sensors linked to client h: every sensor for the security desk,
// every other one (the second, the fourth...) for the facility app.
func (sim *simulation) linked(h *webhook) []locks.SensorID {
	if h == sim.security {
		return sim.sensors
	}
	var ids []locks.SensorID
	for i, id := range sim.sensors {
		if i%2 == 1 {
			ids = append(ids, id)
		}
	}
	return ids
}

// badMessages are the messages the simulation sends that the service must refuse.
var badMessages = []string{`{"sensor_id": "xa7v9Dfadr7H", "data": 1`, `{"sensor_id": "NoSuchSensor", "data": 1, "ts": 1764000000}`,
	`{"sensor_id": "0xA", "data": 7, "ts": 1764000000}`}

// sensors says how many of all the sensors a client is linked to.
func sensors(n, all int) string {
	if n == all {
		return fmt.Sprintf("all %d sensors", all)
	}
	return fmt.Sprintf("%d of the %d sensors", n, all)
}

// play sends the readings until ctx ends: every sensor every o.every, a quarter of them
// a new state, the silent sensor nothing from 1s after the start until the service has
// recorded it lost; and three bad messages at the start. The silence ends on the loss,
// not after a time: however slow the machine, the loss and the restoration both happen.
func (sim *simulation) play(ctx context.Context, o options) {
	for _, bad := range badMessages {
		if sim.publish(ctx, []byte(bad)) {
			sim.mu.Lock()
			sim.bad++
			sim.mu.Unlock()
		}
	}
	quietFrom := time.Now().Add(time.Second)
	quiet, lostSeen := false, false // the silent sensor's silence: begun, over
	t := time.NewTicker(o.every)
	defer t.Stop()
	for {
		now := time.Now()
		if !quiet && !lostSeen && now.After(quietFrom) {
			quiet = true
		}
		if quiet {
			if cur, err := sim.svc.store.Current(ctx, sim.silent); err == nil && cur.Lost {
				quiet, lostSeen = false, true
			}
		}
		for _, id := range sim.sensors {
			if id == sim.silent && quiet {
				continue
			}
			sim.mu.Lock()
			state, seen := sim.lastState[id]
			changed := !seen || rand.IntN(4) == 0
			if changed {
				state = 1 - state
				if !seen {
					state = rand.IntN(2)
				}
			}
			sim.lastState[id] = state
			sim.mu.Unlock()
			body, _ := json.Marshal(map[string]any{"sensor_id": id, "data": state, "ts": float64(now.UnixMicro()) / 1e6})
			if !sim.publish(ctx, body) {
				return
			}
			// Counted once sent: settle waits for every reading counted to be stored.
			sim.mu.Lock()
			sim.readings++
			if changed {
				sim.changes++
			}
			heardAgain := id == sim.silent && lostSeen && !sim.silenced
			sim.silenced = sim.silenced || heardAgain
			sim.mu.Unlock()
			if heardAgain {
				sim.svc.cfg.logger.Info("simulation: the silent sensor, found lost, is heard again", "sensor", id)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (sim *simulation) publish(ctx context.Context, body []byte) bool {
	if err := sim.pub.Publish(ctx, body); err != nil {
		if ctx.Err() == nil {
			sim.mu.Lock()
			sim.publishErr = err
			sim.mu.Unlock()
		}
		return false
	}
	return true
}

// finish stops the sensors, waits (up to 30s: only a service that is stuck takes that
// long) for the service to store every reading and deliver every notification, prints a
// summary, and returns what went wrong, one error a problem, for the verdict.
func (sim *simulation) finish(ctx context.Context, out io.Writer) []error {
	sim.stop()
	sim.wg.Wait()
	defer sim.closeHooks()
	defer sim.pub.Close()
	pending := sim.settle(ctx, 30*time.Second)

	st := sim.svc.stats()
	sim.mu.Lock()
	defer sim.mu.Unlock()
	fmt.Fprintf(out, "\nSent: %d readings (%d of them a new state for their sensor) and %d bad messages.\n", sim.readings, sim.changes, sim.bad)
	fmt.Fprintf(out, "Stored: %d readings in %d writes; %d changed their sensor's state, %d repeated it, %d were older than one already stored; %d bad messages refused.\n",
		st.Ingest.Readings, st.Ingest.Batches, st.Ingest.Changed, st.Ingest.Same, st.Ingest.Stale, st.Ingest.Rejected)
	fmt.Fprintf(out, "Notifications: %d delivered in %d attempts; %d attempts failed and were retried; %d given up after the last attempt; %d cancelled (client unlinked); %s still pending.\n",
		st.Notify.Delivered, st.Notify.Attempts, st.Notify.Failed, st.Notify.Dead, st.Notify.Cancelled, pendingCount(pending))
	fmt.Fprintf(out, "Sensors: %d watched; %d reported lost; %d heard again after being lost.\n", st.Liveness.Tracked, st.Liveness.Lost, st.Ingest.Restored)
	var problems []error
	for _, h := range []*webhook{sim.security, sim.facility} {
		got := h.snapshot()
		late := fmt.Sprintf("%d of them came after newer news of their sensor and were dropped", got.late)
		if got.late == 1 {
			late = "1 of them came after newer news of its sensor and was dropped"
		}
		fmt.Fprintf(out, "Client %d, %s, received %d \"changed\", %d \"lost\" and %d \"restored\" notifications; %s",
			h.client, h.name, got.events[locks.EventChanged], got.events[locks.EventLost], got.events[locks.EventRestored], late)
		if got.refused > 0 {
			fmt.Fprintf(out, "; it answered %d requests with 503 on purpose", got.refused)
		}
		fmt.Fprintln(out, ".")
		problems = append(problems, sim.check(ctx, h, got)...)
	}
	fmt.Fprintf(out, "The clients' counts differ because the %s is linked to %s and the %s to %s; and a \"changed\" still waiting for delivery "+
		"(a retry, say) when its sensor changes again is replaced by the newer one, so a client may receive fewer changes than its sensors made.\n",
		sim.security.name, sensors(len(sim.linked(sim.security)), len(sim.sensors)), sim.facility.name, sensors(len(sim.linked(sim.facility)), len(sim.sensors)))
	switch {
	case sim.publishErr != nil:
		problems = append(problems, fmt.Errorf("publishing readings: %w", sim.publishErr))
	case st.Ingest.Rejected < uint64(sim.bad):
		problems = append(problems, fmt.Errorf("%d bad messages sent, %d refused", sim.bad, st.Ingest.Rejected))
	case st.Notify.Dead > 0:
		problems = append(problems, fmt.Errorf("%d notifications given up", st.Notify.Dead))
	case pending > 0:
		problems = append(problems, fmt.Errorf("%d notifications still pending", pending))
	case pending < 0:
		problems = append(problems, errors.New("the notifications still pending could not be counted"))
	}
	return problems
}

// pendingCount is pending, or says it could not be counted (-1).
func pendingCount(pending int) string {
	if pending < 0 {
		return "an unknown number"
	}
	return fmt.Sprint(pending)
}

// settle waits until the queue is empty and no notification is pending, or timeout
// passes, and returns how many are still pending (-1: the store could not count them).
func (sim *simulation) settle(ctx context.Context, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		st := sim.svc.stats()
		sim.mu.Lock()
		stored := st.Ingest.Readings+st.Ingest.Rejected >= uint64(sim.readings+sim.bad)
		sim.mu.Unlock()
		if stored && st.Pending == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return st.Pending
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// check compares what client h kept with the store: the newest notification (by
// sequence) of every linked sensor carries its current state, whatever arrived last,
// and the silent sensor's restoration arrived.
func (sim *simulation) check(ctx context.Context, h *webhook, got received) []error {
	var problems []error
	for _, id := range sim.linked(h) {
		cur, err := sim.svc.store.Current(ctx, id)
		if err != nil {
			return append(problems, err)
		}
		kept, ok := got.kept[id]
		if !cur.Known && !ok {
			continue // never read (the run was stopped at once): nothing to tell
		}
		if !ok || kept.State != cur.State {
			problems = append(problems, fmt.Errorf("client %d: sensor %s is in state %d (event %d), the client's newest news is %v",
				h.client, id, cur.State, cur.Sequence, describe(kept, ok)))
		}
	}
	// The restoration must arrive. The loss may not: a loss still pending when the sensor
	// is heard again is superseded by the restoration, as any older notification of a
	// sensor is by a newer one (an interrupted run stops the notifier at the loss).
	if lost, restored := got.of[sim.silent][locks.EventLost], got.of[sim.silent][locks.EventRestored]; sim.silenced && h == sim.security && restored == 0 {
		problems = append(problems, fmt.Errorf("client %d: %s fell silent and came back, and was told of %d losses and %d restorations of it",
			h.client, sim.silent, lost, restored))
	}
	return problems
}

func describe(b locks.Body, ok bool) string {
	if !ok {
		return "nothing"
	}
	return fmt.Sprintf("state %d (event %d, %s)", b.State, b.Sequence, b.Event)
}

func (sim *simulation) closeHooks() {
	sim.security.close()
	sim.facility.close()
}

// webhook is a client's endpoint: it refuses its first failFirst requests with 503, then
// accepts every notification and keeps, of each sensor, the newest it was told: the one
// with the highest sequence, whatever order they arrived in (the receiver's rule of the
// locks package documentation).
type webhook struct {
	name      string // as registered: "Security desk", "Facility app"
	url       string
	client    locks.ClientID
	srv       *http.Server
	failFirst int

	mu     sync.Mutex
	got    received
	keys   map[string]bool
	latest locks.Latest
}

type received struct {
	events  map[locks.Event]int                    // notifications received, each once
	of      map[locks.SensorID]map[locks.Event]int // events by sensor
	kept    map[locks.SensorID]locks.Body          // the newest of each sensor (in a snapshot)
	refused int                                    // requests refused on purpose
	dupes   int                                    // retries of a notification received already
	late    int                                    // notifications that came after a newer one of their sensor
}

func startWebhook(name string, failFirst int) (*webhook, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &webhook{name: name, url: "http://" + ln.Addr().String() + "/notify", failFirst: failFirst, keys: map[string]bool{},
		got: received{events: map[locks.Event]int{}, of: map[locks.SensorID]map[locks.Event]int{}}}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b locks.Body
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.got.refused < h.failFirst {
		h.got.refused++
		http.Error(w, "try again later", http.StatusServiceUnavailable)
		return
	}
	key := r.Header.Get(locks.IdempotencyKeyHeader)
	if h.keys[key] {
		h.got.dupes++ // already handled: a retry whose first answer was lost
		return
	}
	h.keys[key] = true
	h.got.events[b.Event]++
	if h.got.of[b.SensorID] == nil {
		h.got.of[b.SensorID] = map[locks.Event]int{}
	}
	h.got.of[b.SensorID][b.Event]++
	if !h.latest.Keep(b) {
		h.got.late++ // older news than what the client has: dropped
	}
}

func (h *webhook) snapshot() received {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.got
	c.events = maps.Clone(h.got.events)
	c.of = make(map[locks.SensorID]map[locks.Event]int, len(h.got.of))
	c.kept = make(map[locks.SensorID]locks.Body, len(h.got.of))
	for id, events := range h.got.of {
		c.of[id] = maps.Clone(events)
		if b, ok := h.latest.Get(id); ok {
			c.kept[id] = b
		}
	}
	return c
}

func (h *webhook) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
}
