// Package group shares the feed among a group of processes on RabbitMQ: one ingress
// reads the feed, keeps the producers' states and requests the recoveries, and
// republishes every message into shard queues of the operator's own broker, hashed by
// event; workers consume the shards and deliver to the same listeners as the
// single-process SDK, each match's messages in order. A producer's up reaches the
// application once every shard has processed the recovery behind it.
package group
