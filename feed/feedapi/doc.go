// Package feedapi is the client of the feed's HTTP API: the account (whoami, the
// producers it receives), recovery requests, and every document of the Sports API that
// other parts of the kit read (market descriptions, event summaries, profiles). The SDK
// in package feedkit makes one Client from its access token and sends every HTTP request
// it makes through it; SDK.API hands the same client to a host that reads more.
//
// One Client is the one place where requests are sent, so what every request needs is
// done once, here:
//
//   - the access token travels in the x-access-token header, never in a URL, and no
//     error, log or Response ever shows it;
//   - each attempt is bounded by Config.Timeout;
//   - a GET (whoami, producers, Sports API documents) that fails on the network, on a
//     server error or on a rate limit is tried again, Config.MaxAttempts in all, after
//     a backoff or the Retry-After the API asked for; a recovery request (a POST) is sent
//     once: package recovery retries it within the account's recovery limits, which
//     count every request sent;
//   - when the API answers 429 Too Many Requests, the client sends nothing more to that
//     endpoint (the path with its ids and languages left out, Response.Endpoint) until
//     the Retry-After has passed: those calls fail at once with a *HeldError, which
//     matches feed.ErrTooManyRequests, instead of adding to the account's count;
//   - Config.OnResponse sees every answer as it came (method, URL, status, body,
//     timing), for a host that logs or records the traffic;
//   - an answer other than 2xx is a *feed.APIError naming the method and the URL.
//
// Config.Observer is told of every attempt (its method, its endpoint as
// Response.Endpoint names it, its status, 0 when no answer came, and how long it took on
// the client's clock) and of every GET held after a 429, for metrics: the requests
// Stats.Requests and Stats.Held count, with nothing unbounded such as a URL or a body.
// The otelfeedkit and promfeedkit modules implement it.
//
// The account's limits on recovery requests are not counted here: package recovery
// counts them in its Ledger, shared by every process of the account, and postpones a
// request before it reaches the client.
//
// # If you know Sportradar's SDKs
//
//	Sportradar's SDK                              package feedapi
//	the bookmaker details (whoami.xml)            Client.WhoAmI, BookmakerDetails
//	the server time difference warning            BookmakerDetails.ClockOffset
//	the producers (producers.xml)                 Client.ProducerDescriptions, Client.Producers
//	the recovery requests                         Client.InitiateRecovery, InitiateEventRecovery, ...
//	the raw API data hook                         Config.OnResponse
//	the HTTP timeouts                             Config.Timeout
package feedapi
