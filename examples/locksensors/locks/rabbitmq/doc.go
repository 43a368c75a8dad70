// Package rabbitmq brings lock-sensor readings in from a RabbitMQ queue: Consumer
// hands them to a locks.BatchHandler in batches and acknowledges each batch only once
// the handler has stored it, and Publisher puts readings on the queue (the sensors'
// gateway does that in production; the simulator and the benchmarks use Publisher).
//
// # Delivery guarantees
//
// A reading is acknowledged only after HandleBatch returned nil for the batch that held
// it, with one cumulative acknowledgement per batch. A handler error keeps the batch:
// it is handed again after a backoff, as many times as it takes. A consumer that stops
// (the context ended, the connection dropped) leaves whatever it had not acknowledged
// to the broker, which delivers it again, to this process or another one. Nothing is
// lost and a reading may come twice, which the handler tolerates by contract.
//
// # Batching and flow control
//
// Each consumer has its own AMQP channel, all on one connection. basic.qos(Prefetch)
// bounds what the broker sends ahead of a consumer that has not acknowledged, so a slow
// store slows the broker down instead of filling memory. A batch is whatever has
// already arrived when the consumer is ready for more, up to BatchSize: under load the
// batches fill up, and when the sensors are quiet a lone reading is handled at once,
// without a timer holding it back.
//
// # Reconnection
//
// A lost connection, channel or consumer ends the whole session: every consumer stops,
// the connection is closed, and after a backoff a new connection declares the queue and
// starts every consumer again. A delivery tag never crosses from one connection to the
// next. Before the first session is up, a broker that refuses the credentials, the
// virtual host or the queue declaration is a configuration error, and Run returns it;
// anything else is retried.
package rabbitmq
