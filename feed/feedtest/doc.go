// Package feedtest provides an in-process odds feed for tests, examples and development,
// in the spirit of net/http/httptest: a Broker with the routing of an AMQP topic exchange
// that sessions consume from without RabbitMQ, and a Simulator that publishes realistic
// traffic into it (or into any Publisher), answers recovery requests like the feed's API,
// serves the account and the Sports API for what it sends (APIHandler: market
// descriptions and variants, summaries, fixtures, profiles, schedules, sports,
// tournaments, seasons, timelines, the fixture and result changes; every document valid
// by Sportradar's published schemas), injects faults, and records what it sent so that a
// test can prove nothing was lost.
// Recorder, GlobalRecorder and SnapshotWaiter stand in for a session's listener, global
// events listener and system handler, and ReceiverRecorder for the receiver a session
// gives its transport: they record what they are handed, and a test waits on them rather
// than polling. Marshal and KeyFor give a hand-built message its body and its routing
// key; Broker.Flush, then feedkit's SDK.Flush, wait until what was published has been
// processed. TestTransport holds a transport, the Broker or your own, to the promises
// of feed.Transport.
package feedtest
