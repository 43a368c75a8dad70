// Package carousel republishes collections continuously, in cycles, at a throttle: so
// that every item of a store reaches downstream systems again, even those that missed
// it, without flooding them.
//
// It follows the Financial Times' publish-carousel, generic over what is republished and
// where to: a Source lists item ids (a whole collection, or the items modified in a time
// window, in a stable order), a Publisher republishes one item; both are given to
// NewScheduler, and Config tunes the rest. A Scheduler runs the cycles, each on its own
// goroutine, so one failing never stops another.
//
// # Cycle types
//
//   - ThrottledWholeCollection republishes a whole collection, one item per Throttle,
//     over and over.
//   - FixedWindow republishes the items modified in the last TimeWindow, spreading them
//     over TimeWindow (two items in an hour: one every 30 minutes), never faster than
//     MinimumThrottle. When the minimum makes an iteration overrun (65 items at one a
//     minute take 65 minutes), the next window reaches back by the overrun, so no item
//     is missed.
//   - ScalingWindow spreads likewise within [MinimumThrottle, MaximumThrottle] (5 items
//     with a one-minute maximum take 5 minutes), and each window starts where the
//     previous one ended.
//
// Each iteration publishes its n items at its start, then one every throttle, and the
// next iteration begins one throttle after the last item: the interval holds across
// iterations. A window with nothing to publish waits CoolDown. Throttling is a
// golang.org/x/time/rate limiter of burst one per cycle, on the scheduler's clock.
//
// # Planning and testing a cycle
//
// CycleConfig.Plan works out an iteration in advance with the scheduler's own rules (its
// throttle, its duration, the next window's length), without running anything. A test
// runs the scheduler on a fake clock (Config.Clock, package clock/clocktest): it moves
// the clock with Advance and calls Scheduler.Flush, which returns once every cycle has
// published what was due by then and waits again, so that the test sees each
// publication at its time without polling or sleeping; under Run, once Run has acted on
// the Toggle's answer at its last tick as well.
//
// # Progress, restarts and health
//
// A cycle's CycleMetadata (iteration, total, completed, errors, current item, window,
// states) is saved through a MetadataStore at every CheckpointInterval, at the end of
// each iteration, when the cycle stops and when the scheduler shuts down. Every start of
// the cycle (the scheduler's Start, the toggle turning active, ResumeCycle) restores it
// from the store, never from what the process remembers, which another instance may have
// moved past since: the cycle resumes its interrupted iteration after the last item it
// completed (a keyset position, so items added or removed meanwhile shift nothing), in
// the same window. Metadata with a completed count and no last item (and no inProgress,
// which then reads as true when the count is not 0), as the Financial Times'
// publish-carousel saves it, is resumed by count, as publish-carousel resumes it: the
// first Completed items in the iteration's order are skipped, and a collection holding
// fewer ends the iteration. Metadata saved under a config that selects other items
// (another type, collection or window), or with a negative count, is ignored and the
// cycle starts from the beginning. FileStore (the default) keeps it in a JSON file,
// carousel/pgstore in PostgreSQL.
//
// Completed never exceeds Total, whatever the saved metadata claims: a resumed iteration
// counts its items again and lists the ids after its position once, so that Completed
// is the items it has now less those still to come, however the collection grew or
// shrank since the save; and an item added during an iteration that the iteration goes
// on to publish counts in its Total. Errors never exceed Completed.
//
// A Source that fails makes its cycle Unhealthy; the cycle retries with capped
// exponential backoff and becomes healthy at the first success, or stops if
// Config.StopWhenUnhealthy is set, as publish-carousel does. A failed publish is counted in
// Errors and the cycle goes on.
//
// # Active and passive
//
// Of an active/passive pair only the active instance republishes. Scheduler.Run watches
// a Toggle: when it turns active the cycles start, when it turns passive (or fails) they
// shut down, saving their metadata. FileToggle reads a file an operator edits;
// carousel/pgstore's Lease makes exactly one of several instances active with a
// PostgreSQL advisory lock, and by default does not take over after a failover by
// itself: an operator starts the passive instance (POST /scheduler/start, which promotes
// the lease).
//
// A toggle numbers the activations: each time an instance becomes active it gets a
// Generation greater than every earlier one, of any instance (the Lease counts them in
// a table, the FileToggle takes the time the file was written). The generation fences
// the progress: every save says which activation makes it, and the store refuses a save
// of a cycle from an older generation than the one it last saved (ErrFenced). A cycle
// claims its progress as soon as it has restored it, by saving it under its own
// generation, so that from then on an instance that lost the role and has not noticed
// yet (its next toggle question is up to ToggleInterval away, a lost connection may take
// longer) cannot overwrite it. A takeover therefore does not wait for the old holder's
// last save. The old holder's cycle stops at its first refused save, without holding the
// cycle; until then it republishes what the new holder does too, at most one
// CheckpointInterval of it. The toggle saying active with another generation than the
// last (the instance lost the role and took it back between two questions) restarts the
// cycles, each from the store.
//
// So each switch republishes at most one checkpoint interval's items: none when the
// instance giving up the role saves on its way out, the items published since its last
// checkpoint when it dies. A consumer tells such a republication from a new round by the
// identity every Publication carries.
//
// # Publications
//
// A Publisher gets each item as a Publication: the item, its cycle, origin and
// collection, the cycle's Iteration (from 1, kept by an iteration resumed after a restart
// or on another instance) and the item's Position in it (from 1, going on from the last
// saved when an iteration resumes). The same item in the same cycle and iteration is a
// republication; a greater iteration is the next round. carouselhttp.Publisher sends them
// in the headers X-Carousel-Cycle, X-Carousel-Iteration and X-Carousel-Position (and in
// its default JSON body), beside the X-Request-Id that its retries of one request share.
//
// # Operating it
//
// ParseConfig reads cycles from YAML in publish-carousel's field names, refusing every missing or
// bad field by name before anything starts. The HTTP side lives in the sub-package
// carousel/carouselhttp, so that this package links no HTTP server nor html/template:
// its NewHandler serves the operator API (cycles, throttles, stop/resume/reset, scheduler
// start/shutdown, health) and an HTML status page with a progress bar per cycle, and its
// Publisher POSTs each publication to a URL. examples/carousel puts it together.
//
// # Metrics
//
// Config.Observer is told, per cycle (by name, never by item), of every item published
// or failed and how long its Publish took, every iteration completed and how long it
// took, every failed call to the Source or the store, and every save refused as fenced.
// What is a level (progress, throttle, states) is read from Scheduler.Cycles when the
// metrics are collected. A nil Observer costs a nil check.
package carousel
