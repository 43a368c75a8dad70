package sportdata

// Observer is told of each read of a Provider's caches, so that a metrics library can
// count hits and misses (Config.Observer). Its methods are those of markets.Observer, so
// one value of the otelfeedkit or promfeedkit modules serves both.
//
// cache is one of "event_summaries", "fixtures", "competitor_profiles",
// "player_profiles", "sports", "categories", "tournaments" and "seasons", the names of
// Stats' fields in JSON, apart from those of the names' caches. The methods are called on the goroutines of the Provider's callers,
// concurrently: they must be quick and must not block.
type Observer interface {
	// CacheRead is told of each read of cache: a hit, answered from the cache, or a miss,
	// which needed the API.
	CacheRead(cache string, hit bool)
	// CacheEvicted is told of each entry dropped to keep cache within its size.
	CacheEvicted(cache string)
}
