package osthread

import (
	"errors"
	"sync"
	"syscall"
	"testing"
)

// TestThread: calls run one at a time, on one OS thread; after Stop they are refused
// (Call gives the error Start was given); a nil thread runs them on the caller's goroutine.
func TestThread(t *testing.T) {
	errStopped := errors.New("device is closed")
	var tids []int
	th, err := Start(func() error { tids = append(tids, syscall.Gettid()); return nil }, errStopped)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	running := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				th.Do(func() {
					mu.Lock()
					running++
					if running != 1 {
						t.Error("two calls ran at once")
					}
					mu.Unlock()
					tids = append(tids, syscall.Gettid())
					mu.Lock()
					running--
					mu.Unlock()
				})
			}
		}()
	}
	wg.Wait()
	if len(tids) != 1+16*50 {
		t.Errorf("%d calls ran, want %d", len(tids), 1+16*50)
	}
	for _, id := range tids {
		if id != tids[0] {
			t.Fatalf("calls ran on OS threads %d and %d", tids[0], id)
		}
	}
	th.Stop()
	th.Stop()
	if th.Do(func() { t.Error("ran after stop") }) {
		t.Error("Do after Stop reported true")
	}
	if err := th.Call(func() error { return nil }); err != errStopped {
		t.Errorf("Call after Stop = %v, want %v", err, errStopped)
	}
	initErr := errors.New("init failed")
	if _, err := Start(func() error { return initErr }, errStopped); err != initErr {
		t.Errorf("a failed init gave %v, want %v", err, initErr)
	}
	var none *Thread
	ran := false
	if !none.Do(func() { ran = true }) || !ran || none.Call(func() error { return nil }) != nil {
		t.Error("a nil thread did not run the function on the caller's goroutine")
	}
	none.Stop()
}
