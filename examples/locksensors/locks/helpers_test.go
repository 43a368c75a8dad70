package locks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// t0 is the tests' starting time, on a microsecond like everything a Store keeps.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// reading returns the message of a reading.
func reading(id string, data int, ts time.Time) []byte {
	return fmt.Appendf(nil, `{"sensor_id":%q,"data":%d,"ts":%q}`, id, data, ts.Format(time.RFC3339Nano))
}

// msgs wraps bodies as messages received at at.
func msgs(at time.Time, bodies ...[]byte) []locks.Message {
	out := make([]locks.Message, len(bodies))
	for i, b := range bodies {
		out[i] = locks.Message{Body: b, Received: at}
	}
	return out
}

// registry creates sensors and clients on s and links every client to every sensor.
func registry(t *testing.T, s locks.Store, sensors []string, clients ...string) []locks.ClientID {
	t.Helper()
	ctx := t.Context()
	var ids []locks.ClientID
	for _, url := range clients {
		c, err := s.CreateClient(ctx, locks.Client{Name: "client " + url, URL: url})
		require.NoError(t, err)
		ids = append(ids, c.ID)
	}
	for _, id := range sensors {
		require.NoError(t, s.CreateSensor(ctx, locks.Sensor{ID: locks.SensorID(id), Address: "Svobody st. 23, room " + id}))
		for _, c := range ids {
			require.NoError(t, s.Link(ctx, locks.SensorID(id), c))
		}
	}
	return ids
}

// notes returns every notification of sensor, oldest first.
func notes(t *testing.T, s locks.Store, sensor string) []locks.Notification {
	t.Helper()
	ns, err := s.Notifications(t.Context(), locks.SensorID(sensor), locks.Range{Limit: 1000})
	require.NoError(t, err)
	return ns
}

// summary is a notification's event, state and status, for comparing lists.
func summary(ns []locks.Notification) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%s %d %s client%d", n.Event, n.State, n.Status, n.ClientID))
	}
	return out
}

// finishes wraps a Store and reports every Finish that succeeded.
type finishes struct {
	locks.Store
	done chan locks.Result
}

func watchFinish(s locks.Store) *finishes {
	return &finishes{Store: s, done: make(chan locks.Result, 1000)}
}

func (f *finishes) Finish(ctx context.Context, r locks.Result) error {
	err := f.Store.Finish(ctx, r)
	if err == nil {
		f.done <- r
	}
	return err
}

// next waits for the next Finish.
func (f *finishes) next(t *testing.T) locks.Result {
	t.Helper()
	select {
	case r := <-f.done:
		return r
	case <-time.After(time.Minute):
		t.Fatal("no attempt recorded within 10s")
		return locks.Result{}
	}
}

// decode parses a notification body.
func decode(t *testing.T, b []byte) locks.Body {
	t.Helper()
	var body locks.Body
	require.NoError(t, json.Unmarshal(b, &body))
	return body
}
