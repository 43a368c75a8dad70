package concurrent

import "testing"

// TestRingFIFOAcrossGrowth pushes and pops in uneven runs so that the ring wraps around
// and grows while wrapped, and checks every value comes out once, in order.
func TestRingFIFOAcrossGrowth(t *testing.T) {
	var r ring[int]
	next, want := 0, 0
	for round := range 50 {
		for range round%7 + 3 {
			r.push(next)
			next++
		}
		for range round%5 + 1 {
			if r.len() == 0 {
				break
			}
			if got := r.pop(); got != want {
				t.Fatalf("pop = %d, want %d", got, want)
			}
			want++
		}
	}
	for r.len() > 0 {
		if got := r.pop(); got != want {
			t.Fatalf("pop = %d, want %d", got, want)
		}
		want++
	}
	if want != next {
		t.Fatalf("popped %d values, pushed %d", want, next)
	}
	if n := len(r.buf); n&(n-1) != 0 {
		t.Fatalf("buffer size %d is not a power of two", n)
	}
}

// TestRingClearsPoppedSlots: a popped slot no longer holds its value, so the ring does
// not keep messages alive.
func TestRingClearsPoppedSlots(t *testing.T) {
	var r ring[*int]
	v := 1
	r.push(&v)
	r.pop()
	for i, p := range r.buf {
		if p != nil {
			t.Fatalf("slot %d still holds a value", i)
		}
	}
}
