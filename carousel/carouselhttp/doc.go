// Package carouselhttp is the HTTP side of package carousel: the operator's API and status
// page over a Scheduler (NewHandler), and a carousel.Publisher that POSTs each
// publication to a URL (Publisher).
//
// It is a package of its own so that a program that republishes through something else
// and runs no operator API links neither a net/http server nor html/template: package
// carousel itself holds no HTTP code.
//
// Every request of a Publisher carries the publication's identity in the headers
// X-Carousel-Cycle, X-Carousel-Iteration and X-Carousel-Position (and in its default JSON
// body), beside the X-Request-Id that its retries of one request share, so that a
// receiver tells a republication after a restart or a failover from a new round.
package carouselhttp
