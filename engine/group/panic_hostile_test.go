package group

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// TestGoroutinePanicsReturned checks that a panic in one of the group's goroutines is
// handed to the caller as a *PanicError that says where, instead of ending the process
// (before, a part shorter than the others panicked in reduceParts' goroutine and the
// process died with exit code 2).
func TestGoroutinePanicsReturned(t *testing.T) {
	err := eachDevice(3, "reading", func(i int) error {
		if i == 1 {
			panic("boom")
		}
		return nil
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || !strings.Contains(pe.Where, "reading of device 1") || len(pe.Stack) == 0 {
		t.Errorf("eachDevice: %v (%+v); want the panic of device 1 with its stack", err, pe)
	}

	parts := [][]float32{make([]float32, 3*reduceChunk), make([]float32, 5)}
	if _, err := reduceParts(parts, ReduceSum); !errors.As(err, &pe) || !strings.Contains(err.Error(), "reducing the parts") {
		t.Errorf("reduceParts of unequal parts: %v; want a *PanicError", err)
	}
	if _, err := combine(driver.AllReduce, parts, ReduceSum, 0, 3*reduceChunk, nil); !errors.As(err, &pe) {
		t.Errorf("combine of unequal parts: %v; want a *PanicError", err)
	}
}

// TestGroupKeepsPanic runs a staged all-reduce whose parts are of unequal lengths (what a
// peer's short part did before parts were checked): the collective returns the panic and
// Group.Panicked keeps it for the program to end on.
func TestGroupKeepsPanic(t *testing.T) {
	ctx := context.Background()
	g, err := newGroup(fakeDevices(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	g.size = 2
	if g.Panicked() != nil {
		t.Fatal("a new group has panicked")
	}
	var qs []*engine.Queue
	var send, recv []*engine.Buffer[float32]
	for i, d := range g.devs {
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		s, err := engine.Upload(ctx, q, make([]float32, 5-2*i)) // 5 and 3 elements
		if err != nil {
			t.Fatal(err)
		}
		r, err := engine.NewBuffer[float32](d, 5)
		if err != nil {
			t.Fatal(err)
		}
		qs, send, recv = append(qs, q), append(send, s), append(recv, r)
	}
	err = staged(ctx, g, driver.AllReduce, qs, send, recv, ReduceSum, 0, 5)
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("staged: %v; want a *PanicError", err)
	}
	if got := g.Panicked(); got != pe {
		t.Errorf("Panicked() = %v; want %v", got, pe)
	}
	var nilGroup *Group
	if nilGroup.Panicked() != nil {
		t.Error("a nil group has panicked")
	}
}
