package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/internal/testenv"
)

// TestEndToEnd runs the service on real RabbitMQ and PostgreSQL with a fake clock, a
// client whose endpoint fails its first calls, and a restart in the middle.
func TestEndToEnd(t *testing.T) {
	pgURL, amqpURL := pgtest.URL(t), testenv.AMQPVhost(t)
	clk := clocktest.NewFake(t0)
	cfg := serviceConfig{pgURL: pgURL, amqpURL: amqpURL, clock: clk, silence: time.Hour,
		schedule: locks.Logarithmic{Unit: time.Minute}, poll: 24 * time.Hour, consumers: 2}
	h := startService(t, cfg)
	hook := newEndpoint(t, 3)

	var client locks.Client
	h.call("POST", "/clients", map[string]string{"name": "Security desk", "url": hook.URL}, 201, &client)
	sensors := []string{"xa7v9Dfadr7H", "0xA", "TestSensor", "0123456789aBcDeF", "Door5"}
	for _, id := range sensors {
		h.call("POST", "/sensors", map[string]string{"id": id, "address": "Svobody st. 23, room " + id}, 201, nil)
		h.call("PUT", fmt.Sprintf("/sensors/%s/clients/%d", id, client.ID), nil, 204, nil)
	}
	pub, err := rabbitmq.NewPublisher(t.Context(), amqpURL, rabbitmq.DefaultQueue)
	require.NoError(t, err)
	defer pub.Close()
	send := func(bodies ...[]byte) {
		t.Helper()
		require.NoError(t, pub.PublishBatch(t.Context(), bodies))
	}

	// Every sensor reports a state, and three bad messages come with them.
	var first [][]byte
	for _, id := range sensors {
		first = append(first, reading(id, 1, t0))
	}
	bad := [][]byte{[]byte(`{"sensor_id": "0xA", "data": 1`), reading("NoSuchSensor", 1, t0), []byte(`{"sensor_id":"0xA","data":2,"ts":1764000000}`)}
	send(append(first, bad...)...)
	h.handled(len(first) + len(bad))
	got := h.attempts(len(sensors))
	assert.Equal(t, map[locks.Status]int{locks.Pending: 3, locks.Delivered: 2}, got, "the endpoint fails its first 3 calls")

	// The same values again notify nobody.
	send(first...)
	h.handled(len(first))
	var st serviceStats
	h.call("GET", "/stats", nil, 200, &st)
	assert.Equal(t, uint64(len(sensors)), st.Ingest.Same)
	assert.Equal(t, 3, st.Pending, "only the three failed notifications are pending")

	// The service restarts with three notifications waiting for their retry; a change
	// (of a sensor whose client knows its state already: a change of one whose
	// notification is pending would supersede it) and a repeat are sent while it is down.
	h.stop()
	by, _ := hook.received()
	var flipped string
	for _, id := range sensors {
		if len(by[locks.SensorID(id)]) == 1 {
			flipped = id
		}
	}
	require.NotEmpty(t, flipped)
	other := sensors[0]
	if other == flipped {
		other = sensors[1]
	}
	send(reading(flipped, 0, t0.Add(time.Second)), reading(other, 1, t0.Add(time.Second)))
	h = startService(t, cfg)
	h.handled(2)
	got = h.attempts(1)
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 1}, got, "the change sent while the service was down")
	h.advance(clk, time.Minute)
	got = h.attempts(3)
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 3}, got, "the retries outlived the restart")

	// An hour of silence: every sensor is lost; one comes back.
	h.advance(clk, time.Hour)
	got = h.attempts(len(sensors))
	assert.Equal(t, map[locks.Status]int{locks.Delivered: len(sensors)}, got)
	back := clk.Now()
	send(reading(other, 1, back))
	h.handled(1)
	assert.Equal(t, map[locks.Status]int{locks.Delivered: 1}, h.attempts(1))

	by, dup := hook.received()
	assert.Empty(t, dup, "no notification delivered twice")
	// Each event of a sensor numbered after the one before, across the restart.
	for _, id := range sensors {
		want := []string{"changed 1 #1", "lost 1 #2"}
		if id == flipped {
			want = []string{"changed 1 #1", "changed 0 #2", "lost 0 #3"}
		}
		if id == other {
			want = append(want, "restored 1 #3")
		}
		assert.ElementsMatch(t, want, by[locks.SensorID(id)], "sensor %s", id)
	}

	var cur locks.Current
	h.call("GET", "/sensors/"+other+"/state", nil, 200, &cur)
	assert.False(t, cur.Lost)
	assert.True(t, cur.LastSeen.Equal(back))
	assert.Equal(t, int64(3), cur.Sequence, "the sequence of its latest event, its restoration")
	h.call("GET", "/sensors/"+flipped+"/state", nil, 200, &cur)
	assert.True(t, cur.Lost)
	assert.Equal(t, locks.State(0), cur.State)

	var dead struct {
		DeadLetters []struct {
			Raw    string `json:"raw"`
			Reason string `json:"reason"`
		} `json:"dead_letters"`
	}
	h.call("GET", "/dead-letters", nil, 200, &dead)
	require.Len(t, dead.DeadLetters, 3)
	reasons := map[string]string{}
	for _, d := range dead.DeadLetters {
		reasons[d.Raw] = d.Reason
	}
	assert.Contains(t, reasons[string(bad[0])], "body: not a JSON object")
	assert.Contains(t, reasons[string(bad[1])], `sensor_id: "NoSuchSensor" is not a registered sensor`)
	assert.Contains(t, reasons[string(bad[2])], "data: 2 is not 0 or 1")

	var history struct {
		Notifications []locks.Notification `json:"notifications"`
	}
	h.call("GET", "/sensors/"+other+"/notifications", nil, 200, &history)
	require.NotEmpty(t, history.Notifications)
	for _, n := range history.Notifications {
		assert.Equal(t, locks.Delivered, n.Status, "notification %d", n.ID)
		require.NotEmpty(t, n.History)
		assert.Empty(t, n.History[len(n.History)-1].Error, "its last attempt delivered it")
	}
}
