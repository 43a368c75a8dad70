package feed_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/feed"
)

func TestDeliveryReporterCountsAndPassesOn(t *testing.T) {
	var got []error
	var logs bytes.Buffer
	r := feed.NewDeliveryReporter(func(err error) { got = append(got, err) }, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()

	r.Report(ctx, nil)
	malformed := &feed.DecodeError{Type: feed.MessageOddsChange, Msg: "bad"}
	r.Report(ctx, malformed)
	r.Report(ctx, fmt.Errorf("%w: 9 bytes", feed.ErrBodyTooLarge))
	r.Report(ctx, &feed.ListenerError{Method: "OnBetStop", Err: errors.New("db down")})
	r.Report(ctx, &feed.ListenerError{Method: "OnBetStop", Panic: "bug"})

	assert.Equal(t, feed.DeliveryErrorCounts{Unparsable: 2, Failed: 1, Panicked: 1}, r.Counts())
	assert.Len(t, got, 4, "nil is not reported")
	assert.Contains(t, logs.String(), "listener panicked")
	assert.Contains(t, logs.String(), "listener failed")
	assert.Contains(t, logs.String(), "unparsable message")
}

func TestDeliveryReporterSurvivesAPanickingCallback(t *testing.T) {
	var logs bytes.Buffer
	r := feed.NewDeliveryReporter(func(error) { panic("callback bug") }, slog.New(slog.NewTextHandler(&logs, nil)))
	r.Report(context.Background(), &feed.ListenerError{Method: "OnOddsChange", Err: errors.New("x")})
	assert.Equal(t, uint64(1), r.Counts().Failed)
	assert.Contains(t, logs.String(), "OnError panicked")
}
