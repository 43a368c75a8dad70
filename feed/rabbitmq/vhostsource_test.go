package rabbitmq_test

import (
	"context"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// vhostSource answers with one virtual host, or an error, and counts the questions.
type vhostSource struct {
	vhost string
	err   error
	asked atomic.Int32
}

func (s *vhostSource) VirtualHost(context.Context) (string, error) {
	s.asked.Add(1)
	return s.vhost, s.err
}

// The transport asks its VirtualHostSource at the first Subscribe and keeps the answer:
// two subscriptions on a URL without the virtual host both consume from the one the
// source gave, and it was asked once.
func TestVirtualHostSourceIsAskedOnce(t *testing.T) {
	b := newBroker(t)
	u, err := url.Parse(b.url)
	require.NoError(t, err)
	src := &vhostSource{vhost: u.Path[1:]} // the test's own virtual host
	u.Path, u.RawPath = "/", ""
	cfg := b.config(t)
	cfg.URL, cfg.VirtualHostSource = u.String(), src
	tr := b.transport(t, cfg)
	r1, r2 := feedtest.NewReceiverRecorder(), feedtest.NewReceiverRecorder()
	subscribeAll(t, tr, r1)
	subscribeAll(t, tr, r2)
	assert.Equal(t, int32(1), src.asked.Load())

	pub := b.publisher(t) // on the test's virtual host, named in its URL
	require.NoError(t, pub.Publish(t.Context(), "hi.-.live.bet_stop.1.sr:match.1.-", []byte(`<bet_stop event_id="sr:match:1" product="1" timestamp="1"/>`)))
	require.NoError(t, pub.Flush(t.Context()))
	for _, r := range []*feedtest.ReceiverRecorder{r1, r2} {
		assert.Equal(t, feedtest.CallReceive, r.RequireNext(t).Kind, "the message reached the source's virtual host")
	}
}

// A source that fails, or answers nothing, fails the Subscribe with its error: the
// virtual host is configuration, and retrying without it would hide the mistake.
func TestVirtualHostSourceFailureFailsSubscribe(t *testing.T) {
	for _, c := range []struct {
		src  *vhostSource
		want string
	}{
		{&vhostSource{err: errors.New("whoami: 503")}, "rabbitmq: the virtual host (Config.VirtualHostSource): whoami: 503"},
		{&vhostSource{}, "rabbitmq: the virtual host (Config.VirtualHostSource) is empty"},
	} {
		tr, err := rabbitmq.New(rabbitmq.Config{URL: "amqp://127.0.0.1:1/", VirtualHostSource: c.src})
		require.NoError(t, err)
		_, err = tr.Subscribe(t.Context(), []string{"#"}, feedtest.NewReceiverRecorder())
		assert.EqualError(t, err, c.want)
	}
	_, err := rabbitmq.New(rabbitmq.Config{URL: "amqp://127.0.0.1:1/", VirtualHost: "/a", VirtualHostSource: &vhostSource{}})
	assert.ErrorContains(t, err, "VirtualHost and VirtualHostSource are both set: set one")
}
