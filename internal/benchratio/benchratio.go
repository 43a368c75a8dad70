// Package benchratio times a function against a baseline in the same benchmark run, for
// the targets stated as "n times faster than".
package benchratio

import (
	"runtime"
	"time"
)

// InTurn times fast and baseline in turn, ten blocks of about 100 ms each, and returns
// how many times faster fast is: the ratio of their mean times per call. A block is long
// enough to pay for the garbage collections its own allocations cause, and starts from a
// collected heap, so that a function that allocates little does not pay for collections
// the other's garbage started; alternating, a slow spell of a busy machine slows both
// alike. (Timed call by call in alternation, a parser measured 4x what it measured alone:
// it paid for the baseline's collections.)
func InTurn(fast, baseline func()) float64 {
	block := func(f func()) float64 {
		runtime.GC()
		n, start := 0, time.Now()
		for ; n < 1 || time.Since(start) < 100*time.Millisecond; n++ {
			f()
		}
		return float64(time.Since(start)) / float64(n)
	}
	var fastPer, basePer float64
	for range 10 {
		basePer += block(baseline)
		fastPer += block(fast)
	}
	return basePer / fastPer
}
