package carouselhttp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/jsonapi/jsonapitest"
)

// "." and ".." cannot be path segments (the mux cleans /cycles/.. to /, a browser
// resolves cycles/../stop to /stop): names that would be are refused, 400 naming the
// field.
func TestAPIRefusesDotNames(t *testing.T) {
	for _, name := range []string{"..", "."} {
		t.Run(name, func(t *testing.T) {
			f := newAPIFixture(t, nil)
			rec := f.do(http.MethodPost, "/cycles", `{"name":"`+name+`","type":"ThrottledWholeCollection",`+
				`"origin":"o","collection":"c","coolDown":"1m","throttle":"1s"}`)
			e := jsonapitest.DecodeError(t, rec, http.StatusBadRequest)
			require.Len(t, e.Fields, 1)
			assert.Equal(t, "name", e.Fields[0].Field)
			assert.Contains(t, e.Fields[0].Problem, "starting with a letter or digit")
		})
	}
}
