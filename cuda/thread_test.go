package cuda

import (
	"errors"
	"sync"
	"syscall"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestOSThread: calls run one at a time, on one OS thread; after stop they are refused
// (call gives ErrClosed); a nil thread runs them on the caller's goroutine. The same test
// runs in both backends, whose thread.go files are the same helper.
func TestOSThread(t *testing.T) {
	var tids []int
	th, err := startOSThread(func() error { tids = append(tids, syscall.Gettid()); return nil })
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
				th.do(func() {
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
	th.stop()
	th.stop()
	if th.do(func() { t.Error("ran after stop") }) {
		t.Error("do after stop reported true")
	}
	if err := th.call(func() error { return nil }); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("call after stop = %v, want ErrClosed", err)
	}
	if _, err := startOSThread(func() error { return errors.New("init failed") }); err == nil {
		t.Error("a failed init started the thread")
	}
	var none *osThread
	ran := false
	if !none.do(func() { ran = true }) || !ran || none.call(func() error { return nil }) != nil {
		t.Error("a nil thread did not run the function on the caller's goroutine")
	}
	none.stop()
}
