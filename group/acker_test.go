package group

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ackLog records what an acker sent, in order: "ack N" for a cumulative ack through N,
// "barrier N" for the acknowledgement of the barrier delivered as N.
type ackLog struct {
	mu   sync.Mutex
	sent []string
	fail error // returned by every later call once set
}

func (l *ackLog) ack(tag uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	l.sent = append(l.sent, "ack "+strconv.FormatUint(tag, 10))
	return nil
}

func (l *ackLog) acknowledge(b *shardBarrier) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	l.sent = append(l.sent, "barrier "+strconv.FormatUint(b.tag, 10))
	return nil
}

// take returns what was sent since the last take.
func (l *ackLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sent
	l.sent = nil
	return s
}

// newTestAcker returns an acker that acks every `every` done deliveries, counting what
// it settles, and its log; the tests call settle themselves, where the settler would.
func newTestAcker(every int) (*acker, *ackLog, *int) {
	log := &ackLog{}
	a := newAcker(every, log.ack, log.acknowledge)
	acked := new(int)
	a.acked = func(n int) { *acked += n }
	return a, log, acked
}

// Only the contiguous prefix of done deliveries is acknowledged, cumulatively: a
// delivery done out of order waits for every one before it.
func TestAckerAcksTheDonePrefixOnly(t *testing.T) {
	a, log, acked := newTestAcker(1)
	for tag := uint64(1); tag <= 6; tag++ {
		a.add(tag)
	}
	a.done(3)
	a.done(2)
	require.NoError(t, a.settle(false))
	assert.Empty(t, log.take(), "1 is not done: nothing after it is acknowledged")

	a.done(1)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 3"}, log.take())
	a.done(5)
	a.done(6)
	require.NoError(t, a.settle(false))
	assert.Empty(t, log.take())
	a.done(4)
	a.done(4) // twice: ignored
	a.done(99)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 6"}, log.take())
	assert.Equal(t, 6, *acked)
}

// Acks are batched: one every `every` done deliveries while more are pending, and at
// once when nothing is left pending (the stream paused) or the settling is final.
func TestAckerBatchesAcks(t *testing.T) {
	a, log, acked := newTestAcker(4)
	for tag := uint64(1); tag <= 10; tag++ {
		a.add(tag)
	}
	for tag := uint64(1); tag <= 3; tag++ {
		a.done(tag)
	}
	require.NoError(t, a.settle(false))
	assert.Empty(t, log.take(), "3 done, 7 pending: wait for a batch of 4")
	a.done(4)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 4"}, log.take())
	a.done(5)
	require.NoError(t, a.settle(true))
	assert.Equal(t, []string{"ack 5"}, log.take(), "a final settling acks whatever is done")
	for tag := uint64(6); tag <= 10; tag++ {
		a.done(tag)
	}
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 10"}, log.take())
	a.addDone(11)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 11"}, log.take(), "nothing pending: acked at once")
	assert.Equal(t, 11, *acked)
}

// A barrier is acknowledged to the ingress once every delivery before it is done, after
// they are acknowledged to the broker, and only then is it done itself; what comes after
// it waits for it.
func TestAckerAcknowledgesABarrierOnceEverythingBeforeItIsDone(t *testing.T) {
	a, log, _ := newTestAcker(100)
	a.add(1)
	a.add(2)
	a.addBarrier(&shardBarrier{tag: 3})
	a.add(4)
	a.addBarrier(&shardBarrier{tag: 5})
	a.done(4)
	a.done(2)
	require.NoError(t, a.settle(false))
	assert.Empty(t, log.take())

	a.done(1)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 2", "barrier 3", "ack 4", "barrier 5", "ack 5"}, log.take())
}

// A barrier at the head is acknowledged by a final settling too; one whose deliveries
// before it are not done is left to the broker.
func TestAckerFinalSettling(t *testing.T) {
	a, log, _ := newTestAcker(100)
	a.add(1)
	a.addBarrier(&shardBarrier{tag: 2})
	a.add(3)
	a.addBarrier(&shardBarrier{tag: 4})
	a.done(1)
	require.NoError(t, a.settle(true))
	assert.Equal(t, []string{"ack 1", "barrier 2", "ack 2"}, log.take())
	require.NoError(t, a.settle(true))
	assert.Empty(t, log.take(), "3 is not done: the barrier after it waits")
}

// Tags need not be consecutive: they are found by search.
func TestAckerWithGapsInTheTags(t *testing.T) {
	a, log, _ := newTestAcker(1)
	for _, tag := range []uint64{2, 5, 6, 9} {
		a.add(tag)
	}
	a.done(9)
	a.done(5)
	a.done(7) // unknown
	a.done(2)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 5"}, log.take())
	a.done(6)
	require.NoError(t, a.settle(false))
	assert.Equal(t, []string{"ack 9"}, log.take())
}

// run settles on every wake-up and once more at stop; a failed ack ends it with the
// error, and the deliveries are left to the broker.
func TestAckerRun(t *testing.T) {
	a, log, _ := newTestAcker(2)
	stop := make(chan struct{})
	res := make(chan error, 1)
	go func() { res <- a.run(stop) }()
	for tag := uint64(1); tag <= 3; tag++ {
		a.add(tag)
		a.done(tag)
	}
	a.add(4)
	close(stop)
	require.NoError(t, <-res)
	sent := log.take()
	require.NotEmpty(t, sent)
	assert.Equal(t, "ack 3", sent[len(sent)-1], "the final settling acks the done prefix: %v", sent)

	b, blog, _ := newTestAcker(1)
	blog.fail = errors.New("channel closed")
	stop2 := make(chan struct{})
	res2 := make(chan error, 1)
	go func() { res2 <- b.run(stop2) }()
	b.add(1)
	b.done(1)
	assert.ErrorIs(t, <-res2, blog.fail)
	close(stop2)
}
