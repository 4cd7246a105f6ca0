// Package parallel runs independent tasks on a bounded number of
// goroutines.
package parallel

import (
	"runtime"
	"sync"
)

// For calls f(0), ..., f(n-1) on up to workers goroutines (GOMAXPROCS if
// workers < 1) and returns the first error. After an error no new call
// starts; calls already running finish.
func For(n, workers int, f func(i int) error) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
