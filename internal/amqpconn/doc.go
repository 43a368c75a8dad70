// Package amqpconn is the connection plumbing that feedkit's two RabbitMQ clients share:
// the feed transport (feed/rabbitmq) and the lock-sensor consumer of the locksensors
// example (examples/locksensors/locks/rabbitmq). Both need the same guarantees from
// amqp091-go, which it does not give by itself, so both get them from here:
//
//   - A dial that a context can end at any step. amqp091-go watches no context while it
//     connects, shakes hands or waits on a reply, so Dial keeps the TCP socket and
//     closes it under amqp091-go when the context ends, until the caller's own setup
//     (channels, declarations) is done and it calls Dialed.Release.
//   - One deadline for the TCP connect, TLS and the AMQP handshake, so that a broker
//     that accepted the socket and went silent cannot hold a dial for ever.
//   - A failed handshake told apart from a refusal. amqp091-go reports any failure of
//     the login step as bad credentials; Dial looks at how the socket's reads ended and
//     reports a timeout or a write failure as ErrHandshake, worth retrying, so that a
//     flaky network is not taken for a configuration error.
//   - The socket itself (Socket), for deadlines on writes that would otherwise hold
//     amqp091-go's locks for ever, and for closing it when a graceful close gets no
//     answer.
//   - URL parsing whose errors never quote the password (ParseURL), and the broker's
//     address without credentials for logs (RedactedURL).
//
// What differs between the clients stays with them: the amqp.Config they dial with,
// their timeouts, and how they classify errors that retrying will not fix.
package amqpconn
