package amqpconn

import (
	"errors"
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ParseURL checks an AMQP URL, naming the field (prefix + "URL") when it is wrong, as
// configuration errors do: ParseURL("rabbitmq.Config.", "") fails with
// "rabbitmq.Config.URL is required". Its errors never quote the URL, which may hold a
// password.
//
// It also refuses a URL whose virtual host holds an '@': that is how
// amqp://user:12/34@host/ reads when the '/' in the password is not percent-encoded
// (host "user", port 12, virtual host "34@host/"), so the URL would name the wrong
// broker, and RedactedURL would show the password as its port and virtual host.
func ParseURL(prefix, raw string) (amqp.URI, error) {
	if raw == "" {
		return amqp.URI{}, errors.New(prefix + "URL is required")
	}
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		return amqp.URI{}, fmt.Errorf("%sURL: not an amqp:// or amqps:// URL: %s", prefix, redactedParseError(err))
	}
	if strings.Contains(uri.Vhost, "@") {
		return amqp.URI{}, errors.New(prefix + "URL: the virtual host holds an '@': a '/' in the password must be percent-encoded as %2F")
	}
	return uri, nil
}

// redactedParseError returns amqp.ParseURI's complaint when it cannot hold a secret. The
// parser's errors quote pieces of the URL (a password with an unencoded '/' is read as
// a host and port, and quoted as such), so only its two fixed messages are passed on.
func redactedParseError(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "AMQP scheme must") || strings.HasPrefix(msg, "URI must not contain whitespace") {
		return msg
	}
	return "it does not parse (reserved characters in the user name or password, such as / ? # @ :, must be percent-encoded)"
}

// RedactedURL is the broker's address without the credentials, for errors and logs:
// scheme, host, port and virtual host, which is what tells brokers apart, and no user
// name, password or query.
func RedactedURL(u amqp.URI) string {
	return fmt.Sprintf("%s://%s:%d (vhost %q)", u.Scheme, u.Host, u.Port, u.Vhost)
}
