package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// AMQPVhost creates a virtual host of the test's own on the test broker, lets the URL's
// user use it, and returns FEEDKIT_AMQP_URL pointed at it; the vhost is deleted when the
// test ends. Tests that close connections or declare exchanges then cannot disturb the
// tests of other packages, which go test runs in parallel on the same broker.
func AMQPVhost(t testing.TB) string {
	t.Helper()
	base := AMQPURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", AMQPURLVar, err)
	}
	user := u.User.Username()
	if user == "" {
		user = "guest" // amqp091-go's default
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	vhost := "feedkit-test-" + hex.EncodeToString(b[:])
	RabbitMQCtl(t, "add_vhost", vhost)
	t.Cleanup(func() { RabbitMQCtl(t, "delete_vhost", vhost) })
	RabbitMQCtl(t, "set_permissions", "-p", vhost, user, ".*", ".*", ".*")
	u.Path = "/" + vhost
	u.RawPath = "/" + url.PathEscape(vhost)
	return u.String()
}

// CloseAMQPConnections makes the test broker close every connection whose client named
// itself connectionName (the AMQP connection_name property), as an operator's
// rabbitmqctl close_connection would, and returns how many it closed. Unlike
// close_all_connections, it leaves the connections of other tests alone.
func CloseAMQPConnections(t testing.TB, connectionName, reason string) int {
	t.Helper()
	if strings.ContainsAny(connectionName+reason, `"\`) {
		t.Fatalf("CloseAMQPConnections: quotes and backslashes are not supported in %q, %q", connectionName, reason)
	}
	// A connection still in its handshake has no client properties yet (not a list),
	// and one may close while we look: neither may crash the whole expression.
	expr := fmt.Sprintf(`length([ok || P <- rabbit_networking:connections(),
		case catch proplists:get_value(client_properties, rabbit_networking:connection_info(P, [client_properties]), []) of
			L when is_list(L) -> lists:member({<<"connection_name">>, longstr, <<"%s">>}, L);
			_ -> false
		end,
		ok <- [catch rabbit_networking:close_connection(P, "%s")]]).`, connectionName, reason)
	out := strings.TrimSpace(RabbitMQCtl(t, "eval", expr))
	n, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("CloseAMQPConnections: rabbitmqctl eval printed %q, not a count", out)
	}
	return n
}
