package carousel

import "time"

// Observer is told what a Scheduler's cycles do as it happens, so that a metrics library
// can count and time it (Config.Observer). The cycles' metadata counts the same things
// for the current iteration: Completed, Errors, Iteration.
//
// What is a level rather than an event is not told: a cycle's progress (Iteration,
// Completed, Total, Errors, Progress), its throttle and its states are read from
// Scheduler.Cycles when the metrics are collected (CycleStatus.Metadata, whose Throttle
// is the interval the cycle publishes at now, an operator's SetThrottle included).
//
// Its methods are called on the cycles' goroutines (and on an operator's, for the save
// of ResetCycle), concurrently, with no lock held that Cycles, Cycle or Status take: they
// must be quick, must not block and must not call back into the scheduler. The cycle is named by its name, which the config bounds (at most 64
// characters, and as many as there are cycles): fit for a metric's label. An item's id
// never is.
type Observer interface {
	// CarouselPublished is told after each item a cycle republished, with how long the
	// Publisher took. Like the metadata's Completed, an item whose Publish a stop cut
	// short is not told: a resume publishes it again.
	CarouselPublished(cycle string, took time.Duration)
	// CarouselPublishFailed is told after each item whose Publish failed, with how long
	// it took: the cycle counts it in Errors (and in Completed) and goes on.
	CarouselPublishFailed(cycle string, took time.Duration)
	// CarouselIterationCompleted is told when a cycle has gone through an iteration,
	// an empty one (a window with nothing in it) included, with how long the iteration
	// took from its start: for one resumed after a stop or on another instance, from its
	// first start, so the time it stood stopped counts; 0 when the progress it resumed
	// does not say when it began (publish-carousel's).
	CarouselIterationCompleted(cycle string, took time.Duration)
	// CarouselFailed is told of each call to the Source or to the MetadataStore that
	// failed, with the operation: a failed Source call or metadata load makes the cycle
	// unhealthy and is retried (or stops the cycle, under StopWhenUnhealthy); a failed
	// save is retried at the next checkpoint. A call that failed because the cycle was
	// being stopped is not told.
	CarouselFailed(cycle string, op Op)
	// CarouselFenced is told of each save of a cycle's metadata that the store refused
	// because a later activation saved it (ErrFenced): another instance has taken the
	// cycle over, and this one stops it.
	CarouselFenced(cycle string)
}

// Op is an operation of a cycle on its Source or its MetadataStore, as CarouselFailed
// names it.
type Op uint8

// The operations CarouselFailed names.
const (
	// OpLoad is the load of the cycle's saved metadata (MetadataStore.Load).
	OpLoad Op = iota
	// OpSave is a save of the cycle's metadata (MetadataStore.Save). A save refused as
	// fenced is told by CarouselFenced instead: it is no failure of the store.
	OpSave
	// OpCount is the count of an iteration's items (Source.Count), and for a resumed
	// iteration the listing that finds where it stands.
	OpCount
	// OpList is the listing of a page of the items to publish (Source.List).
	OpList
)

// String names the operation in lower case ("load", "save", "count", "list"), as a
// metric's label.
func (o Op) String() string {
	switch o {
	case OpLoad:
		return "load"
	case OpSave:
		return "save"
	case OpCount:
		return "count"
	case OpList:
		return "list"
	}
	return "unknown"
}

// doing names the operation for the cycle's LastError and its logs.
func (o Op) doing() string {
	switch o {
	case OpLoad:
		return "loading metadata"
	case OpSave:
		return "saving metadata"
	case OpCount:
		return "counting"
	case OpList:
		return "listing"
	}
	return "unknown"
}
