// Package markets names what the feed sends by id: market 18 with the specifier
// total=2.5 is "Total 2.5", and its outcome 12 is "over 2.5". The names come from the
// Sports API's market descriptions, in the languages asked for.
//
// # Names
//
// Names gives a market line's name (MarketName) and an outcome's (OutcomeName), for the
// event the line belongs to. A listener asks for them when it needs them, such as when
// it shows a bet or settles one; decoding a message never waits for a name. The SDK
// makes one Names for all its listeners (feedkit.SDK.Names); New makes one from any API
// client, such as a feedapi.Client.
//
// A name is a description's template rendered with the line's specifiers (see
// Template): "{!goalnr} goal" with goalnr=2 is "2nd goal". Templates that mention the
// event's competitors ({$competitor1}) read the event's summary; those that mention a
// player ({%player}) read the player's profile; outcome ids that are player or
// competitor URNs (sr:player:1234) are named from profiles. A line with a variant
// specifier is named from its variant: variant=sr:exact_goals:4+ takes its outcomes from
// the variant list, variant=pre:markettext:… from the market's own description of the
// variant. Outcomes of flex-score markets are shifted by the score specifier
// (FlexScore).
//
// # What is read, and when
//
// Nothing is read until a name is asked for. A language's market descriptions (about a
// thousand markets) and its variant list are each read once, the first time a name in
// that language needs them, and again after Config.RefreshInterval or on Refresh; when a
// refresh fails, the descriptions held go on being used. Event summaries and profiles are
// kept for Config.ProfileTTL. Every cache is bounded (Config.CacheSize entries, and
// Config.MaxLanguages languages of descriptions), drops what was read least recently,
// and counts its hits, misses, fetches, errors and entries (Stats). Names asked for at
// once by many listeners share one request per document. A failed request is answered
// again for Config.ErrorTTL, then tried again; the API's refusals are *feed.APIError
// values that name the URL (never the access token) and match feed.ErrNotFound,
// feed.ErrServerError, and so on.
//
// Config.Observer is told of each read of a cache, as a hit or a miss, and of each entry
// a cache drops to stay within its size, for metrics; the otelfeedkit and promfeedkit
// modules implement it. Each cache is named as its field of Stats is in JSON
// ("markets", "variants", "single_variants", "summaries", "profiles"), and the counts
// told are the Hits, Misses and Evictions of Stats; how many entries each holds is read
// from Stats.
//
// # Names the descriptions lack
//
// The feed may send a market or an outcome before the cached descriptions know it. Such
// a name is an error that says what is missing (matching ErrUnknownMarket or
// ErrUnknownOutcome), never a guess, and the message it came with is delivered as any
// other. The first such miss reads the descriptions again, at most once per
// Config.RefetchInterval for each document, so that the name is found as soon as the
// API has it, without a request for every message that carries it.
package markets
