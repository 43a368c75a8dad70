package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/internal/pagesize"
)

// Store keeps everything the service knows. Every method is safe for concurrent use,
// also by several processes sharing one database. MemoryStore and pgstore.Store
// implement it; lockstest.Run checks an implementation.
type Store interface {
	Registry
	History
	Outbox
	// Update is the one write of the ingest path. It locks the states of ids (unknown
	// ids are skipped), calls fn once with them (a sensor registered but never read is
	// present with Known false), and commits the Effects fn returns all at once, or
	// nothing when fn or the write fails. While fn runs no other Update of those sensors
	// can read or write them, so a change is compared and written in one step. It
	// returns how many notifications it created.
	Update(ctx context.Context, ids []SensorID, fn func(map[SensorID]Current) (Effects, error)) (int, error)
	// Liveness returns the state of every sensor that has sent a reading, for a
	// heartbeat monitor to resume from.
	Liveness(ctx context.Context) ([]Current, error)
}

// Effects is what an Update writes.
type Effects struct {
	// States replace the states of sensors Update locked (others are refused), but for
	// their Sequence, which is the Store's: what a state says of it is ignored.
	States []Current
	// Readings are added to the history; their IDs are assigned.
	Readings []StoredReading
	// DeadLetters are added to the dead letters; their IDs are assigned.
	DeadLetters []DeadLetter
	// Cancel: every pending notification of these sensors, created before this Update,
	// becomes Cancelled with reason "superseded".
	Cancel []SensorID
	// Notify: each is an event of its sensor and takes the sensor's next sequence (its
	// Current.Sequence plus one, then plus two for the sensor's next Change in Notify,
	// and so on), whether or not a client is linked; it becomes one pending notification
	// per client linked to its sensor when the Update commits, due at Now, all of them
	// with that sequence. The sequence is counted in the same write, so that the
	// sequences of a sensor's events, however many Updates run at once in however many
	// processes, are 1, 2, 3, ... in the order the events were recorded, with no gap and
	// no repeat. The notifications are created after Cancel applies.
	Notify []Change
	// Now is the time of the Update: when the notifications are created and due.
	Now time.Time
}

// Change is an event to notify every client linked to a sensor about: the
// Notification's fields of the same names. Its sequence is the Store's to assign.
type Change struct {
	SensorID  SensorID
	Event     Event
	State     State
	At        time.Time
	ReadingAt time.Time
}

// Registry holds the sensors, the clients and the links between them.
type Registry interface {
	// CreateSensor registers s, with no state; ErrExists if its id is taken.
	CreateSensor(ctx context.Context, s Sensor) error
	GetSensor(ctx context.Context, id SensorID) (Sensor, error)
	// UpdateSensor sets the address of the sensor s.ID.
	UpdateSensor(ctx context.Context, s Sensor) error
	// DeleteSensor forgets the sensor with its state, links, history and notifications.
	DeleteSensor(ctx context.Context, id SensorID) error
	// ListSensors returns up to limit sensors with ids after after, in byte order. limit
	// is a page size (0 means DefaultLimit; below 0 or above MaxLimit is refused with a
	// *FieldError for "limit"), as are the limits of ListClients, DeadNotifications and
	// DeadLetters.
	ListSensors(ctx context.Context, after SensorID, limit int) ([]Sensor, error)

	// CreateClient registers c and returns it with its new ID.
	CreateClient(ctx context.Context, c Client) (Client, error)
	GetClient(ctx context.Context, id ClientID) (Client, error)
	// UpdateClient sets the name and URL of the client c.ID.
	UpdateClient(ctx context.Context, c Client) error
	// DeleteClient forgets the client and its links; its pending notifications are
	// cancelled at their next attempt (no link any more). Its attempts stay in the
	// sensors' history.
	DeleteClient(ctx context.Context, id ClientID) error
	// ListClients returns up to limit clients with IDs after after, in ID order.
	ListClients(ctx context.Context, after ClientID, limit int) ([]Client, error)

	// Link makes the client receive the sensor's notifications; linking twice is no
	// error. ErrNotFound names the sensor or client that does not exist.
	Link(ctx context.Context, sensor SensorID, client ClientID) error
	// Unlink undoes Link; ErrNotFound when they are not linked.
	Unlink(ctx context.Context, sensor SensorID, client ClientID) error
	// Clients returns the clients linked to the sensor, in ID order.
	Clients(ctx context.Context, sensor SensorID) ([]Client, error)

	// Current returns the sensor's state.
	Current(ctx context.Context, id SensorID) (Current, error)
}

// The page sizes, the same across feedkit, of every list a caller pages through (the
// limit of ListSensors, ListClients, DeadNotifications and DeadLetters, Range.Limit,
// ClaimRequest.Limit, and the operator API's limit parameter): 0 means DefaultLimit, 1
// to MaxLimit is taken as given, and a negative size or one above MaxLimit is refused
// with a *FieldError naming the field, not clamped. There is no "all": a caller that
// needs everything pages through.
const (
	DefaultLimit = pagesize.Default
	MaxLimit     = pagesize.Max
)

// ResolveLimit returns the page size limit stands for (DefaultLimit for 0), or a
// *FieldError naming field ("limit", "Range.Limit", "ClaimRequest.Limit") that says the
// rule: what every Store does with a page size before it reads.
func ResolveLimit(field string, limit int) (int, error) {
	n, err := pagesize.Resolve(field, limit)
	if err != nil {
		return 0, &FieldError{Field: field, Problem: fmt.Sprintf("%d %s", limit, pagesize.Rule)}
	}
	return n, nil
}

// Range selects a page of a sensor's history: the entries whose time is in [From, To)
// (a zero bound is open), ordered by (time, ID), after the cursor After, at most Limit.
type Range struct {
	From, To time.Time
	After    Cursor
	// Limit is the page size: 0 means DefaultLimit, 1 to MaxLimit is taken as given,
	// and any other is refused with a *FieldError for "Range.Limit". The zero Range is
	// the first page of DefaultLimit entries, not an empty one.
	Limit int
}

// Cursor is the position after which a page starts: the time and ID of the last entry
// of the previous page. The zero Cursor is the start.
type Cursor struct {
	At time.Time
	ID int64
}

// IsZero reports whether c is the start.
func (c Cursor) IsZero() bool { return c.At.IsZero() && c.ID == 0 }

// History reads what happened.
type History interface {
	// Readings returns the sensor's readings in r, by their ts (At). ErrNotFound for an
	// unknown sensor.
	Readings(ctx context.Context, sensor SensorID, r Range) ([]StoredReading, error)
	// Notifications returns the sensor's notifications in r, by their time (At), each
	// with its attempts in History. ErrNotFound for an unknown sensor.
	Notifications(ctx context.Context, sensor SensorID, r Range) ([]Notification, error)
	// Notification returns one notification with its attempts.
	Notification(ctx context.Context, id NotificationID) (Notification, error)
	// DeadNotifications returns up to limit dead notifications with IDs after after, in
	// ID order, without their attempts.
	DeadNotifications(ctx context.Context, after NotificationID, limit int) ([]Notification, error)
	// DeadLetters returns up to limit refused readings with IDs after after, in ID order.
	DeadLetters(ctx context.Context, after int64, limit int) ([]DeadLetter, error)
}

// Outbox is the durable queue of notifications. Claim and Finish bracket an attempt:
// Claim moves a notification's next attempt time forward before the attempt starts, so
// that a notifier that dies mid-attempt leaves a retry behind, and no two notifiers (in
// one process or many) ever start the same attempt.
type Outbox interface {
	// Claim takes up to c.Limit pending notifications due at c.Now, oldest due first,
	// skipping any another Claim holds. For each it counts the attempt about to start
	// (Attempts+1) and sets NextAttempt to c.Now + c.RetryAfter(Attempts). A
	// notification whose Attempts already reached c.MaxAttempts (its notifier died during
	// its last attempt) is made Dead instead and not returned.
	Claim(ctx context.Context, c ClaimRequest) ([]Delivery, error)
	// Finish records how an attempt went: r.Attempt, if not nil, joins the notification's
	// history whatever happened meanwhile, and the notification becomes r.Status
	// (Pending again after a failed attempt, Delivered, Dead or Cancelled) with r.Reason,
	// but only if it is still pending at attempt r.N: a notification cancelled by a newer
	// change, or claimed again, is left as it is. ErrNotFound if it no longer exists.
	Finish(ctx context.Context, r Result) error
	// Replay makes a dead notification pending again, due at now, with its attempts
	// counted from zero and its sequence as it was: a receiver that has had newer news
	// of the sensor since drops it. ErrConflict if it is not dead.
	Replay(ctx context.Context, id NotificationID, now time.Time) error
	// Pending counts the pending notifications, and the earliest NextAttempt among them
	// (zero when there are none), for an operator's figures: counting costs in
	// proportion to what is pending.
	Pending(ctx context.Context) (n int, next time.Time, err error)
	// NextDue returns the earliest NextAttempt among the pending notifications (zero
	// when there are none), so a notifier knows when to look again. Unlike Pending it
	// counts nothing: a notifier asks every time it goes idle, however long the backlog.
	NextDue(ctx context.Context) (time.Time, error)
}

// ClaimRequest says which notifications Claim takes and how it schedules their retries.
type ClaimRequest struct {
	Now time.Time
	// Limit is how many Claim takes at most, a page size: 0 means DefaultLimit, 1 to
	// MaxLimit is taken as given, and any other is refused with a *FieldError for
	// "ClaimRequest.Limit".
	Limit       int
	MaxAttempts int
	// RetryAfter returns how long after attempt n (1 for the first) starts the next
	// attempt is due if this one does not end the notification.
	RetryAfter func(n int) time.Duration
}

// Delivery is a claimed notification with what its attempt needs, read at the claim.
type Delivery struct {
	Notification
	// Address is the sensor's installation address now.
	Address string
	// Client is the client as it is now; Linked is whether it is still linked to the
	// sensor. A notification to a client no longer linked is not sent.
	Client Client
	Linked bool
}

// Result is how an attempt ended, for Outbox.Finish.
type Result struct {
	Notification NotificationID
	// N is the attempt's number, the notification's Attempts when it was claimed.
	N int
	// At is when the attempt ended: the Finished time of a notification it ends.
	At time.Time
	// Attempt is the request made, or nil when none was (a client no longer linked).
	Attempt *Attempt
	Status  Status
	Reason  string
}
