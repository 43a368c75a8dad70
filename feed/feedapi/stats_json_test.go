package feedapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// Stats encodes to JSON in the kit's style, every field set, and decodes to the same.
func TestStatsEncodeToJSON(t *testing.T) {
	b := jsoncheck.RoundTrip(t, jsoncheck.Filled[feedapi.Stats]())
	assert.ElementsMatch(t, []string{"requests", "failures", "retries", "held"}, jsoncheck.Keys(t, b))
}
