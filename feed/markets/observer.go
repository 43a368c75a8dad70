package markets

// Observer is told of each read of the caches behind Names, so that a metrics library
// can count hits and misses (Config.Observer; the otelfeedkit and promfeedkit modules
// implement it). Entries held are in Stats.
//
// cache is one of "markets", "variants", "single_variants", "summaries" and "profiles",
// the names of Stats' fields in JSON. Its methods are called on the goroutines of
// Names' callers, concurrently: they must be quick and must not block.
type Observer interface {
	// CacheRead is told of each read of cache: a hit, answered from the cache, or a miss,
	// which needed the API.
	CacheRead(cache string, hit bool)
	// CacheEvicted is told of each entry dropped to keep cache within its size.
	CacheEvicted(cache string)
}
