// Package rabbitmq is the feed.Transport for RabbitMQ, built on amqp091-go: sessions
// consume the Unified Odds Feed (or a broker of your own) through it, and its Publisher
// lets package feedtest's Simulator feed a real broker.
//
// Each subscription (one per feed.Session) holds one connection with one channel and one
// server-named, exclusive, auto-delete queue bound to the topic exchange with the
// session's binding keys. The subscription's goroutine only reads deliveries and hands
// them to the session; it never decodes a body or runs listener code. Deliveries are
// acknowledged in batches once handed over, and the prefetch window (basic.qos) bounds
// what the broker sends ahead, so a slow listener slows the broker down instead of
// filling memory.
//
// # Reconnection
//
// A lost connection or channel (a network failure, missed heartbeats, the broker closing
// it, the consumer cancelled) is reported to the receiver as ConnectionDown; the
// subscription then reconnects with capped exponential backoff and jitter, declares a
// new queue, binds it, consumes, and reports ConnectionUp. A broker unreachable at
// Subscribe is retried the same way. Close ends the loop in every state: waiting between
// attempts, dialing, mid-handshake, or consuming.
//
// amqp091-go v1.16 offers an opt-in recovery of its own (Config.Recovery with
// NotifyStateChange). This package uses a reconnect loop of its own instead, because
// the built-in one does not fit a feed consumer:
//
//   - It retries at a fixed interval and gives up after MaxRetryCount attempts, leaving
//     a closed connection behind; a feed consumer must retry for as long as it runs,
//     backing off while the broker is down.
//   - It recovers a connection that was once open, but a broker unreachable at start is
//     the caller's problem again.
//   - A recovered consumer keeps delivering on the same Go channel, with delivery tags
//     that restart from 1 on the new AMQP channel, and nothing on a delivery says which
//     incarnation it came from: an acknowledgement of a message read just before the
//     loss can land on the new channel and acknowledge (or fail on) a stranger. Here
//     each connection is a fresh link with deliveries of its own, and a tag is only ever
//     acknowledged on the channel it came from.
//   - The session must hear of the loss and of the return, at the moment they happen,
//     in order with the messages; a new link per connection gives exactly those points,
//     while the built-in recovery spreads them over state-change notices on the
//     connection and each channel.
//   - Its waits use the wall clock and it logs through a process-wide logger; ours run
//     on an injectable clock and report through Config.OnError and Config.Logger.
//
// Messages published while a subscription is down never reach it (its queue is gone):
// the recovery API fetches them, as the feed protocol intends.
//
// Config.Observer is told, for metrics, of each link made (a first connection or a
// reconnection, consuming), each link lost and each connection attempt that failed,
// with the error: the events Stats counts as Connects, ConnectionDrops and
// FailedAttempts. What is a level (links up now, bytes and messages received) is read
// from Stats. The otelfeedkit and promfeedkit modules implement it.
//
// # Notify channels and stuck writes
//
// amqp091-go delivers connection and channel events on channels the client registers.
// It no longer blocks its reader on a close notice, but it waits up to five seconds on
// each blocked or cancel notice, and a notice nobody receives is lost. Every channel
// registered here (NotifyClose on the connection and the channel, NotifyCancel,
// NotifyBlocked) is buffered and drained by a goroutine of the link until amqp091-go
// closes it.
//
// amqp091-go writes while holding its locks, and its shutdown takes the same locks, so
// a write stuck on a silent network would keep even the heartbeat timeout from ending
// the connection. The transport keeps the socket under each connection: acknowledgements
// are written under a deadline, Close bounds the link's last moments with one, and the
// Publisher's writes end when their context does.
package rabbitmq
