package feedtest

import "github.com/feedkit/feedkit/feed"

// KeyFor returns the routing key the feed gives message m, sent by producer p about an
// event of sport sportID, as the Simulator keys its own: an alive or a snapshot_complete
// gets the system key (-.-.-.alive.-.-.-.-, p and sportID unused); an event message is
// "live" from a live producer (and "virt" too from a virtual one), "pre" from a prematch
// one, and high priority when it is a live odds_change or bet_stop. The key names no
// node; set its Node for a recovery's reply, which the feed addresses to the node that
// asked:
//
//	k := feedtest.KeyFor(msg, lo, 1)
//	k.Node = feed.Node(7)
//	err := broker.Publish(ctx, k.String(), feedtest.Marshal(msg))
func KeyFor(m feed.Message, p feed.Producer, sportID int) feed.RoutingKey {
	t := m.Type()
	if t.IsSystem() {
		return feed.RoutingKey{Type: t}
	}
	return eventKey(t, m.MessageHeader().Event, p, sportID)
}

// eventKey is the routing key of an event message of type t about event, sent by p.
func eventKey(t feed.MessageType, event feed.URN, p feed.Producer, sportID int) feed.RoutingKey {
	k := feed.RoutingKey{Type: t, SportID: sportID, Event: event, Priority: feed.PriorityLow}
	live := p.Scope&(feed.ScopeLive|feed.ScopeVirtual) != 0
	switch {
	case p.Scope&feed.ScopeVirtual != 0:
		k.Virtual, k.Live = true, true
	case live:
		k.Live = true
	default:
		k.Prematch = true
	}
	if live && (t == feed.MessageOddsChange || t == feed.MessageBetStop) {
		k.Priority = feed.PriorityHigh
	}
	return k
}
