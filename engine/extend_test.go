package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// TestExtend checks what packages that extend engine use: a device's, queue's and
// buffer's state, a buffer used on another opening of its device, and the refusal inside
// a capture.
func TestExtend(t *testing.T) {
	fake.Register()
	ctx := context.Background()
	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		t.Fatal(err)
	}
	other, err := engine.Open(ctx, "fake:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := dev.Err(); err != nil {
		t.Errorf("Err of an open device = %v", err)
	}
	var none *engine.Device
	if err := none.Err(); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Err of a nil device = %v, want ErrInvalidArg", err)
	}
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	b, err := engine.NewBuffer[float32](dev, 16)
	if err != nil {
		t.Fatal(err)
	}
	dq, err := q.DriverQueue("collective")
	if err != nil || dq == nil {
		t.Fatalf("DriverQueue = %v, %v", dq, err)
	}
	q.Submitted()
	var inside error
	if _, err := q.Capture(func() error {
		_, inside = q.DriverQueue("collective")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inside, engine.ErrInvalidArg) {
		t.Errorf("DriverQueue inside Capture = %v, want ErrInvalidArg", inside)
	}
	if db, err := b.DriverBuffer(dev); err != nil || db == nil {
		t.Errorf("DriverBuffer on its device = %v, %v", db, err)
	}
	if _, err := b.DriverBuffer(other); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("DriverBuffer on another opening = %v, want ErrInvalidArg", err)
	}
	if err := q.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Err(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Err of a closed device = %v, want ErrClosed", err)
	}
	if _, err := q.DriverQueue("collective"); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("DriverQueue on a closed device = %v, want ErrClosed", err)
	}
	if _, err := b.DriverBuffer(dev); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("DriverBuffer on a closed device = %v, want ErrClosed", err)
	}
}
