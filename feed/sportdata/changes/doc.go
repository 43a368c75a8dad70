// Package changes tells a sportsbook of the events whose fixture or results changed,
// from the Sports API's two lists of changes, each change once.
//
// # What the lists are for
//
// The feed sends a fixture_change message when the start time, the competitors or the
// status of an event its producers offer odds on changes, and bet_settlement messages
// when its results are known. Not every change comes that way: an event without odds,
// a correction made after settlement, a change sent while the consumer was away and
// that no recovery replays. The API keeps, for the last 24 hours, a list of the events
// whose fixture changed (v1/sports/{lang}/fixtures/changes.xml) and one of the events
// whose results changed (v1/sports/{lang}/results/changes.xml), each event with the
// time of its change. A Manager reads both lists every Config.Interval (an hour by
// default, as Sportradar's SDKs do) and hands each change to a Listener, which would
// typically fetch the event's fixture or summary again, refresh what the sportsbook
// shows, or check the bets it settled.
//
// # Each change once
//
// A change is an event and the time the API gives for it; the same event listed again at
// a later time is a new change. The manager delivers each change once, in the order of
// the times, across polls and across restarts, and remembers how far it got in a Cursor
// per list: the latest time delivered, and the events delivered at that time. The times
// are to the second and many changes share one, so the time alone is not enough: a
// change listed after a poll at the same second as one already delivered is delivered,
// the one already delivered is not. Each list is asked for from a second before its
// cursor (the API's afterDateTime), so that such a change comes back whether or not the
// API's bound includes its time, and what is listed again is recognised and skipped
// (Stats.AlreadyDelivered).
//
// The cursors live in a Store: MemoryStore for as long as the process runs (a restarted
// process then delivers everything the API still lists again), FileStore in a file on
// the machine, and changes/pgstore's Store in PostgreSQL, which a process on another
// machine can take over. The cursor is saved after each change the listener took, so a
// process that crashes between the listener's return and the save delivers that one
// change again when it restarts: a listener should take a change twice without harm.
// A process stopped for more than a day misses what the lists no longer reach.
//
// # When something fails
//
// A request the API refuses, a list that cannot be read (the error names the entry and
// what is wrong with it), and a Store that cannot load are reported to Config.OnError and
// counted in Stats; nothing of that list is delivered, and the poll is made again at the
// next Interval. A Store that cannot save does not stop the deliveries: the cursor is
// kept in memory, and saved again at the next poll and when the manager stops.
//
// A listener that returns an error, or panics, has not taken the change. The change is
// offered again at the next poll, and the changes after it in its list wait for it, so
// that the order holds and the cursor never passes a change that was not taken; the
// other list goes on. A listener should therefore fail only for what a retry can mend.
//
// # Running it
//
// New makes a manager from an API client (a *feedapi.Client, or the simulator's API in
// tests) and a Listener. Run polls at once and then every Interval until its context
// ends or Close is called; Poll polls at once, beside that schedule. Time comes from
// Config.Clock: a test moves a fake clock (clock/clocktest) past an Interval and calls
// Flush, which returns once the poll of that moment is done.
package changes
