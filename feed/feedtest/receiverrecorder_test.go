package feedtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// Every call is recorded in order, with its argument, and described in one line.
func TestReceiverRecorderRecordsEveryCallInOrder(t *testing.T) {
	r := feedtest.NewReceiverRecorder()
	r.ConnectionUp()
	r.Receive(feed.Delivery{RoutingKey: "a.b", Body: []byte("<alive/>")})
	r.Receive(feed.Delivery{RoutingKey: "a.c", Body: []byte(strings.Repeat("x", 41))})
	r.ConnectionDown(errors.New("broker gone"))
	var got []string
	for _, c := range r.Calls() {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{
		"ConnectionUp()",
		`Receive(a.b, "<alive/>")`,
		`Receive(a.c, "` + strings.Repeat("x", 40) + `...")`,
		"ConnectionDown(broker gone)",
	}, got)
	assert.Equal(t, feedtest.CallReceiverUp, r.RequireNext(t).Kind)
	c := r.RequireNext(t)
	assert.Equal(t, feedtest.CallReceive, c.Kind)
	assert.Equal(t, "a.b", c.Delivery.RoutingKey)
	assert.Len(t, r.Unread(), 2)
}

// A held recorder records a Receive, so the test knows the caller is inside it, and
// keeps the caller there until Release; later calls pass. In a synctest bubble,
// synctest.Wait returns once the caller has either returned (the bug) or waits: the check
// that it has not returned needs no luck.
func TestReceiverRecorderHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := feedtest.NewReceiverRecorder()
		r.Hold()
		defer r.Release() // a failed check still lets the caller go, and the bubble end
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			r.Receive(feed.Delivery{RoutingKey: "a.b", Body: []byte("held")})
		}()
		c := r.RequireNext(t)
		assert.Equal(t, "held", string(c.Delivery.Body))
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("Receive returned while held")
		default:
		}
		r.Release()
		<-returned
		r.Release() // releasing a recorder not held does nothing
		r.Receive(feed.Delivery{RoutingKey: "a.b", Body: []byte("free")})
		assert.Equal(t, "free", string(r.RequireNext(t).Delivery.Body))
	})
}

// RequireNone fails on a call not read yet, and only then; Next gives up with its context.
func TestReceiverRecorderRequireNone(t *testing.T) {
	r := feedtest.NewReceiverRecorder()
	ft := &fatalT{TB: t}
	r.RequireNone(ft)
	assert.Empty(t, ft.fatal)
	r.ConnectionUp()
	r.ConnectionDown(errors.New("gone"))
	r.RequireNone(ft)
	assert.Equal(t, "feedtest: unexpected receiver call ConnectionUp() (2 unread)", ft.fatal)
	r.RequireNext(t)
	r.RequireNext(t)
	ft.fatal = ""
	r.RequireNone(ft)
	assert.Empty(t, ft.fatal)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := r.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "receiver call number 3")
}
