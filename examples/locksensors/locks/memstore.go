package locks

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// DefaultHistoryLimit is how many readings per sensor, and dead letters in all, a
// MemoryStore keeps when its limit is 0.
const DefaultHistoryLimit = 10_000

// MemoryStore is a Store in the process's memory, for a demo or a test: nothing
// survives the process, and only the last HistoryLimit readings of each sensor (and
// dead letters) are kept. The zero value is not usable; call NewMemoryStore.
type MemoryStore struct {
	mu           sync.Mutex
	historyLimit int
	sensors      map[SensorID]*memSensor
	clients      map[ClientID]Client
	notes        map[NotificationID]*Notification
	pending      map[NotificationID]struct{}
	deadLetters  []DeadLetter
	lastClient   ClientID
	lastNote     NotificationID
	lastReading  int64
	lastLetter   int64
}

type memSensor struct {
	sensor   Sensor
	current  Current
	links    map[ClientID]struct{}
	readings []StoredReading // by (At, ID)
	notes    []NotificationID
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore keeping historyLimit readings per sensor
// (0 means DefaultHistoryLimit).
func NewMemoryStore(historyLimit int) *MemoryStore {
	if historyLimit <= 0 {
		historyLimit = DefaultHistoryLimit
	}
	return &MemoryStore{
		historyLimit: historyLimit,
		sensors:      map[SensorID]*memSensor{},
		clients:      map[ClientID]Client{},
		notes:        map[NotificationID]*Notification{},
		pending:      map[NotificationID]struct{}{},
	}
}

func sensorNotFound(id SensorID) error { return fmt.Errorf("sensor %q: %w", id, ErrNotFound) }
func clientNotFound(id ClientID) error { return fmt.Errorf("client %d: %w", id, ErrNotFound) }
func noteNotFound(id NotificationID) error {
	return fmt.Errorf("notification %d: %w", id, ErrNotFound)
}

// CreateSensor implements Registry.
func (m *MemoryStore) CreateSensor(ctx context.Context, s Sensor) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sensors[s.ID]; ok {
		return fmt.Errorf("sensor %q: %w", s.ID, ErrExists)
	}
	m.sensors[s.ID] = &memSensor{sensor: s, current: Current{SensorID: s.ID}, links: map[ClientID]struct{}{}}
	return nil
}

// GetSensor implements Registry.
func (m *MemoryStore) GetSensor(ctx context.Context, id SensorID) (Sensor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sensors[id]; ok {
		return s.sensor, nil
	}
	return Sensor{}, sensorNotFound(id)
}

// UpdateSensor implements Registry.
func (m *MemoryStore) UpdateSensor(ctx context.Context, s Sensor) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sensors[s.ID]
	if !ok {
		return sensorNotFound(s.ID)
	}
	ms.sensor = s
	return nil
}

// DeleteSensor implements Registry.
func (m *MemoryStore) DeleteSensor(ctx context.Context, id SensorID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sensors[id]
	if !ok {
		return sensorNotFound(id)
	}
	for _, n := range ms.notes {
		delete(m.notes, n)
		delete(m.pending, n)
	}
	delete(m.sensors, id)
	return nil
}

// ListSensors implements Registry.
func (m *MemoryStore) ListSensors(ctx context.Context, after SensorID, limit int) ([]Sensor, error) {
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Sensor
	for _, id := range slices.Sorted(maps.Keys(m.sensors)) {
		if id > after && len(out) < limit {
			out = append(out, m.sensors[id].sensor)
		}
	}
	return out, nil
}

// CreateClient implements Registry.
func (m *MemoryStore) CreateClient(ctx context.Context, c Client) (Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastClient++
	c.ID = m.lastClient
	m.clients[c.ID] = c
	return c, nil
}

// GetClient implements Registry.
func (m *MemoryStore) GetClient(ctx context.Context, id ClientID) (Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[id]; ok {
		return c, nil
	}
	return Client{}, clientNotFound(id)
}

// UpdateClient implements Registry.
func (m *MemoryStore) UpdateClient(ctx context.Context, c Client) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.clients[c.ID]; !ok {
		return clientNotFound(c.ID)
	}
	m.clients[c.ID] = c
	return nil
}

// DeleteClient implements Registry.
func (m *MemoryStore) DeleteClient(ctx context.Context, id ClientID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.clients[id]; !ok {
		return clientNotFound(id)
	}
	delete(m.clients, id)
	for _, s := range m.sensors {
		delete(s.links, id)
	}
	return nil
}

// ListClients implements Registry.
func (m *MemoryStore) ListClients(ctx context.Context, after ClientID, limit int) ([]Client, error) {
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Client
	for _, id := range slices.Sorted(maps.Keys(m.clients)) {
		if id > after && len(out) < limit {
			out = append(out, m.clients[id])
		}
	}
	return out, nil
}

// Link implements Registry.
func (m *MemoryStore) Link(ctx context.Context, sensor SensorID, client ClientID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sensors[sensor]
	if !ok {
		return sensorNotFound(sensor)
	}
	if _, ok := m.clients[client]; !ok {
		return clientNotFound(client)
	}
	s.links[client] = struct{}{}
	return nil
}

// Unlink implements Registry.
func (m *MemoryStore) Unlink(ctx context.Context, sensor SensorID, client ClientID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sensors[sensor]
	if !ok {
		return sensorNotFound(sensor)
	}
	if _, ok := s.links[client]; !ok {
		return fmt.Errorf("link of sensor %q and client %d: %w", sensor, client, ErrNotFound)
	}
	delete(s.links, client)
	return nil
}

// Clients implements Registry.
func (m *MemoryStore) Clients(ctx context.Context, sensor SensorID) ([]Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sensors[sensor]
	if !ok {
		return nil, sensorNotFound(sensor)
	}
	out := []Client{}
	for _, id := range slices.Sorted(maps.Keys(s.links)) {
		out = append(out, m.clients[id])
	}
	return out, nil
}

// Current implements Registry.
func (m *MemoryStore) Current(ctx context.Context, id SensorID) (Current, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sensors[id]; ok {
		return s.current, nil
	}
	return Current{}, sensorNotFound(id)
}

// Update implements Store. One lock covers the whole store, so fn should be quick.
func (m *MemoryStore) Update(ctx context.Context, ids []SensorID, fn func(map[SensorID]Current) (Effects, error)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := make(map[SensorID]Current, len(ids))
	for _, id := range ids {
		if s, ok := m.sensors[id]; ok {
			cur[id] = s.current
		}
	}
	e, err := fn(cur)
	if err != nil {
		return 0, err
	}
	for _, c := range e.States {
		if _, ok := cur[c.SensorID]; !ok {
			return 0, fmt.Errorf("locks: Update writes the state of sensor %q it did not lock", c.SensorID)
		}
	}
	for _, r := range e.Readings {
		if _, ok := m.sensors[r.SensorID]; !ok {
			return 0, sensorNotFound(r.SensorID)
		}
	}
	// Checked; now nothing below fails, so the effects apply whole.
	for _, c := range e.States {
		s := m.sensors[c.SensorID]
		c.Sequence = s.current.Sequence // the store's count, not the caller's
		s.current = c
	}
	for _, r := range e.Readings {
		m.lastReading++
		r.ID = m.lastReading
		m.addReading(m.sensors[r.SensorID], r)
	}
	for _, d := range e.DeadLetters {
		m.lastLetter++
		d.ID = m.lastLetter
		d.Raw = slices.Clone(d.Raw)
		m.deadLetters = append(m.deadLetters, d)
	}
	if extra := len(m.deadLetters) - m.historyLimit; extra > 0 {
		m.deadLetters = slices.Delete(m.deadLetters, 0, extra)
	}
	for _, id := range e.Cancel {
		if s, ok := m.sensors[id]; ok {
			for _, n := range s.notes {
				if _, ok := m.pending[n]; ok {
					m.finish(m.notes[n], Cancelled, "superseded", e.Now)
				}
			}
		}
	}
	created := 0
	for _, c := range e.Notify {
		s, ok := m.sensors[c.SensorID]
		if !ok {
			continue
		}
		s.current.Sequence++
		for _, client := range slices.Sorted(maps.Keys(s.links)) {
			m.lastNote++
			n := &Notification{ID: m.lastNote, SensorID: c.SensorID, ClientID: client, Event: c.Event,
				State: c.State, At: c.At, ReadingAt: c.ReadingAt, Sequence: s.current.Sequence,
				Created: e.Now, Status: Pending, NextAttempt: e.Now}
			m.notes[n.ID] = n
			m.pending[n.ID] = struct{}{}
			s.notes = append(s.notes, n.ID)
			created++
		}
	}
	return created, nil
}

// addReading inserts r in s's history in (At, ID) order, dropping the oldest beyond the
// limit.
func (m *MemoryStore) addReading(s *memSensor, r StoredReading) {
	i := len(s.readings)
	for i > 0 && s.readings[i-1].At.After(r.At) {
		i--
	}
	s.readings = slices.Insert(s.readings, i, r)
	if extra := len(s.readings) - m.historyLimit; extra > 0 {
		s.readings = slices.Delete(s.readings, 0, extra)
	}
}

func (m *MemoryStore) finish(n *Notification, status Status, reason string, at time.Time) {
	n.Status, n.Reason, n.Finished = status, reason, at
	if status == Pending {
		n.Finished = time.Time{}
		m.pending[n.ID] = struct{}{}
	} else {
		delete(m.pending, n.ID)
	}
}

// Liveness implements Store.
func (m *MemoryStore) Liveness(ctx context.Context) ([]Current, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Current
	for _, s := range m.sensors {
		if !s.current.LastSeen.IsZero() {
			out = append(out, s.current)
		}
	}
	slices.SortFunc(out, func(a, b Current) int { return cmp.Compare(a.SensorID, b.SensorID) })
	return out, nil
}

// inRange reports whether (at, id) is selected by r, ignoring its limit.
func inRange(r Range, at time.Time, id int64) bool {
	if !r.From.IsZero() && at.Before(r.From) || !r.To.IsZero() && !at.Before(r.To) {
		return false
	}
	if r.After.IsZero() {
		return true
	}
	return at.After(r.After.At) || at.Equal(r.After.At) && id > r.After.ID
}

// Readings implements History.
func (m *MemoryStore) Readings(ctx context.Context, sensor SensorID, r Range) ([]StoredReading, error) {
	var err error
	if r.Limit, err = ResolveLimit("Range.Limit", r.Limit); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sensors[sensor]
	if !ok {
		return nil, sensorNotFound(sensor)
	}
	out := []StoredReading{}
	for _, x := range s.readings {
		if len(out) == r.Limit {
			break
		}
		if inRange(r, x.At, x.ID) {
			out = append(out, x)
		}
	}
	return out, nil
}

// Notifications implements History.
func (m *MemoryStore) Notifications(ctx context.Context, sensor SensorID, r Range) ([]Notification, error) {
	var err error
	if r.Limit, err = ResolveLimit("Range.Limit", r.Limit); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sensors[sensor]
	if !ok {
		return nil, sensorNotFound(sensor)
	}
	var all []Notification
	for _, id := range s.notes {
		n := m.notes[id]
		if inRange(r, n.At, int64(n.ID)) {
			all = append(all, cloneNote(n))
		}
	}
	slices.SortFunc(all, func(a, b Notification) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID))
	})
	if len(all) > r.Limit {
		all = all[:r.Limit]
	}
	if all == nil {
		all = []Notification{}
	}
	return all, nil
}

func cloneNote(n *Notification) Notification {
	c := *n
	c.History = slices.Clone(n.History)
	return c
}

// Notification implements History.
func (m *MemoryStore) Notification(ctx context.Context, id NotificationID) (Notification, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.notes[id]; ok {
		return cloneNote(n), nil
	}
	return Notification{}, noteNotFound(id)
}

// DeadNotifications implements History.
func (m *MemoryStore) DeadNotifications(ctx context.Context, after NotificationID, limit int) ([]Notification, error) {
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Notification{}
	for _, id := range slices.Sorted(maps.Keys(m.notes)) {
		if n := m.notes[id]; id > after && n.Status == Dead && len(out) < limit {
			c := *n
			c.History = nil
			out = append(out, c)
		}
	}
	return out, nil
}

// DeadLetters implements History.
func (m *MemoryStore) DeadLetters(ctx context.Context, after int64, limit int) ([]DeadLetter, error) {
	limit, err := ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []DeadLetter{}
	for _, d := range m.deadLetters {
		if d.ID > after && len(out) < limit {
			d.Raw = slices.Clone(d.Raw)
			out = append(out, d)
		}
	}
	return out, nil
}

// Claim implements Outbox.
func (m *MemoryStore) Claim(ctx context.Context, c ClaimRequest) ([]Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var err error
	if c.Limit, err = ResolveLimit("ClaimRequest.Limit", c.Limit); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []*Notification
	for id := range m.pending {
		if n := m.notes[id]; !n.NextAttempt.After(c.Now) {
			due = append(due, n)
		}
	}
	slices.SortFunc(due, func(a, b *Notification) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), cmp.Compare(a.ID, b.ID))
	})
	var out []Delivery
	for _, n := range due {
		if len(out) == c.Limit {
			break
		}
		if n.Attempts >= c.MaxAttempts {
			m.finish(n, Dead, fmt.Sprintf("no answer to attempt %d of %d", n.Attempts, c.MaxAttempts), c.Now)
			continue
		}
		n.Attempts++
		n.NextAttempt = c.Now.Add(c.RetryAfter(n.Attempts))
		d := Delivery{Notification: *n}
		d.History = nil
		s := m.sensors[n.SensorID]
		d.Address = s.sensor.Address
		d.Client, d.Linked = m.clients[n.ClientID]
		if _, ok := s.links[n.ClientID]; !ok {
			d.Linked = false
		}
		out = append(out, d)
	}
	return out, nil
}

// Finish implements Outbox.
func (m *MemoryStore) Finish(ctx context.Context, r Result) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	note, ok := m.notes[r.Notification]
	if !ok {
		return noteNotFound(r.Notification)
	}
	if r.Attempt != nil {
		note.History = append(note.History, *r.Attempt)
		if r.Attempt.Error != "" {
			note.LastError = r.Attempt.Error
		}
	}
	if note.Status == Pending && note.Attempts == r.N {
		m.finish(note, r.Status, r.Reason, r.At)
	}
	return nil
}

// Replay implements Outbox.
func (m *MemoryStore) Replay(ctx context.Context, id NotificationID, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.notes[id]
	if !ok {
		return noteNotFound(id)
	}
	if n.Status != Dead {
		return fmt.Errorf("notification %d is %s, not dead: %w", id, n.Status, ErrConflict)
	}
	// On a microsecond, as PostgreSQL keeps it: a notifier claims with a time truncated
	// so, and would not find due a time between two.
	now = now.UTC().Truncate(time.Microsecond)
	n.Attempts, n.NextAttempt, n.Reason = 0, now, ""
	m.finish(n, Pending, "", now)
	return nil
}

// NextDue implements Outbox.
func (m *MemoryStore) NextDue(ctx context.Context) (time.Time, error) {
	_, next, err := m.Pending(ctx)
	return next, err
}

// Pending implements Outbox.
func (m *MemoryStore) Pending(ctx context.Context) (int, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var next time.Time
	for id := range m.pending {
		if t := m.notes[id].NextAttempt; next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return len(m.pending), next, nil
}
