package amqpconn

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const doesNotParse = "it does not parse (reserved characters in the user name or password, such as / ? # @ :, must be percent-encoded)"

func TestParseURLNamesTheFieldAndHidesThePassword(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"empty", "", "cfg.URL is required"},
		{"not an AMQP scheme", "http://user:s3cret@host/", "cfg.URL: not an amqp:// or amqps:// URL: AMQP scheme must be either 'amqp://' or 'amqps://'"},
		{"bad escape", "amqp://user:s3cret@host:5672/%zz", "cfg.URL: not an amqp:// or amqps:// URL: " + doesNotParse},
		{"bad port", "amqps://user:s3cret@host:port/", "cfg.URL: not an amqp:// or amqps:// URL: " + doesNotParse},
		{"white space in the password", "amqp://user:s3 cret@host:5672/", "cfg.URL: not an amqp:// or amqps:// URL: URI must not contain whitespace"},
		{
			"unencoded '/' in a numeric password", "amqp://user:1234/s3cret@host:5672/",
			"cfg.URL: the virtual host holds an '@': a '/' in the password must be percent-encoded as %2F",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uri, err := ParseURL("cfg.", tt.url)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			assert.Equal(t, amqp.URI{}, uri)
			assert.NotContains(t, err.Error(), "s3cret")
			assert.NotContains(t, err.Error(), "1234")
		})
	}
}

func TestParseURLAcceptsAnAMQPURL(t *testing.T) {
	uri, err := ParseURL("cfg.", "amqps://user:s3%2Fcret@mq.example.com:5671/vh")
	require.NoError(t, err)
	assert.Equal(t, "amqps", uri.Scheme)
	assert.Equal(t, "mq.example.com", uri.Host)
	assert.Equal(t, 5671, uri.Port)
	assert.Equal(t, "vh", uri.Vhost)
	assert.Equal(t, "s3/cret", uri.Password)

	uri, err = ParseURL("cfg.", "amqp://localhost")
	require.NoError(t, err)
	assert.Equal(t, 5672, uri.Port, "the default port")
	assert.Equal(t, "/", uri.Vhost, "the default virtual host")
}

func TestRedactedParseError(t *testing.T) {
	// net/url quotes the URL, and for a password with an unencoded '/' it quotes the
	// start of the password as a port: nothing of the parser's own text is passed on...
	for _, u := range []string{"amqp://user:s3cret@host:5672/%zz", "amqp://user:s3cret/x@host:5672/", "amqp://user:s3cret#x@host/"} {
		_, err := amqp.ParseURI(u)
		if err == nil {
			continue // parsed (wrongly): ParseURL's vhost check catches what this cannot
		}
		got := redactedParseError(err)
		assert.NotContains(t, got, "s3cret", u)
		assert.Equal(t, doesNotParse, got)
	}
	// ...except its two fixed messages, which quote nothing.
	for _, u := range []string{"http://user:s3cret@host/", "amqp://user:s3 cret@host/"} {
		_, err := amqp.ParseURI(u)
		require.Error(t, err, u)
		assert.Equal(t, err.Error(), redactedParseError(err))
		assert.NotContains(t, redactedParseError(err), "s3")
	}
}

func TestRedactedURL(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"amqps://user:s3cret@mq.example.com:5671/vh", `amqps://mq.example.com:5671 (vhost "vh")`},
		{"amqp://localhost", `amqp://localhost:5672 (vhost "/")`},
		{"amqp://user:s3%2Fcret@localhost:5672/", `amqp://localhost:5672 (vhost "/")`},
		{"amqp://user:s3cret@localhost/feedkit-test?heartbeat=5", `amqp://localhost:5672 (vhost "feedkit-test")`},
	}
	for _, tt := range tests {
		uri, err := amqp.ParseURI(tt.url)
		require.NoError(t, err, tt.url)
		got := RedactedURL(uri)
		assert.Equal(t, tt.want, got)
		assert.NotContains(t, got, "s3cret")
		assert.NotContains(t, got, "s3/cret")
		assert.NotContains(t, got, "user")
	}
}
