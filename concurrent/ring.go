package concurrent

// ring is a growable FIFO without locking of its own: the scheduler keeps one per match
// (its tasks) and one for the ready list (the matches waiting for a worker), all under its
// mutex. A ring that has grown keeps its buffer, so a match that is busy again costs no
// allocation.
type ring[T any] struct {
	buf     []T
	head, n int
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// pop removes the oldest item; the ring must not be empty.
func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero // let what it points to be collected
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

// grow doubles the buffer; sizes stay powers of two so that indexing is a mask.
func (r *ring[T]) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 4
	}
	buf := make([]T, size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
