// Package sportdata reads the sport data behind the feed's messages from the Sports API:
// an event's summary and fixture (start time, competitors, tournament, venue, status),
// competitor and player profiles, and the schedules (a day's, the live one, the
// pre-match one a page at a time). A message carries an event's id; a Provider gives the
// event.
//
// A Provider caches what it reads and merges the languages read for one entity into one
// value: a Text holds a name in every language read so far. Its caches are bounded
// (Config.CacheSize entities, Config.MaxLanguages languages each); callers reading one
// document at once share one request; a failed read is answered again for
// Config.ErrorTTL rather than asked for again at every call. The feed's fixture_change
// drops the event's fixture and summary and sends the next fixture read to
// fixture_change_fixture.xml, which the API serves fresh (FixtureChanged). Purge and
// PurgeReadBefore drop entities by id or by age, and Stats counts each cache's hits,
// misses and requests.
//
// Export writes the caches in a versioned format and Import reads them back, so that a
// restarted or a new process starts warm: after an import, reading the imported entities
// makes no API call until they age past Config.TTL.
//
// By default a read returns its error (a *feed.APIError naming the URL, or a *ParseError
// naming the document and what was wrong) and nothing else. A read in several languages
// of which some fail can instead return the languages it read with the error
// (Config.Errors, ReturnPartial), for a host that prefers some names to none.
//
// The Parse functions read one document each, for a host that reads the API itself.
//
// # If you know Sportradar's SDKs
//
//	Sportradar's SDK                            package sportdata
//	the sport data provider                     Provider
//	a match's or a stage's summary              Provider.Summary
//	the fixture, fixture change fixture         Provider.Fixture, Provider.FixtureChanged
//	competitor and player profiles              Provider.Competitor, Provider.Player
//	schedules for a date, live, pre-match       Provider.Schedule, LiveSchedule, PreMatchSchedule
//	cache export and import                     Provider.Export, Provider.Import
//	ExceptionHandlingStrategy Catch / Throw     Config.Errors: ReturnPartial / ReturnError
package sportdata
