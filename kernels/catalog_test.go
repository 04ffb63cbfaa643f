package kernels

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestCatalog checks every registered op's metadata and that its family has a .cl file with
// the header the suite's files open with.
func TestCatalog(t *testing.T) {
	ops := Ops()
	if len(ops) == 0 {
		t.Fatal("no ops registered")
	}
	for _, op := range ops {
		parts := strings.Split(op.Name, "/")
		if len(parts) != 3 || parts[0] != op.Family || parts[2] != op.Type || op.Doc == "" || op.SizeDoc == "" {
			t.Errorf("%s: name must be family/op/type with Family %q, Type %q, and Doc and SizeDoc set", op.Name, op.Family, op.Type)
		}
		if op.QuickSize > op.DefaultSize {
			t.Errorf("%s: quick size %d above default size %d", op.Name, op.QuickSize, op.DefaultSize)
		}
		src, err := Source(op.Family)
		if err != nil {
			t.Errorf("%s: %v", op.Name, err)
			continue
		}
		for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants"} {
			if !strings.Contains(src[:min(len(src), 6000)], "// "+section) {
				t.Errorf("%s.cl: header lacks a %q section", op.Family, section)
			}
		}
	}
	for _, f := range Families() {
		if got, err := Match(f); err != nil || len(got) == 0 {
			t.Errorf("family %s registers no op: %v", f, err)
		}
	}
	if _, err := Match("no-such-family"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Match(no-such-family): %v, want ErrNotFound", err)
	}
	if _, err := Lookup("stream/nope/float32"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Lookup: %v, want ErrNotFound", err)
	}
	if got, err := Match("stream/triad"); err != nil || len(got) != 2 {
		t.Errorf("Match(stream/triad) = %d ops, %v; want float32 and float64", len(got), err)
	}
	if got, err := Match("*/*/float64"); err != nil || len(got) == 0 {
		t.Errorf("Match(*/*/float64) = %d ops, %v", len(got), err)
	}
}

// TestOps runs every op of the catalog as `prism bench` and `prism run` do (the same
// Instance), on every device: set up with rotation, run twice (two input sets where the op
// rotates), verified after each run; a size of 0 is refused.
func TestOps(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Ops() {
			t.Run(op.Name, func(t *testing.T) {
				if _, err := op.Setup(q, Params{Size: 0}); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("size 0: %v, want ErrInvalidArg", err)
				}
				size := op.QuickSize
				if small() {
					size = min(size, 1024) // Oclgrind: about 10^4 operations per second
				}
				in, err := op.Setup(q, Params{Size: size, Seed: 11, Rotate: true})
				if errors.Is(err, engine.ErrUnsupported) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := in.Close(); err != nil {
						t.Error(err)
					}
				}()
				if m := in.Model(); m.Bytes <= 0 || m.Flops < 0 {
					t.Errorf("model %+v", m)
				}
				for run := range 2 {
					if err := in.Run(q); err != nil {
						t.Fatal(err)
					}
					if err := in.Verify(q); err != nil {
						t.Fatalf("run %d (%s): %v", run, in.Shape(), err)
					}
				}
				t.Logf("%s: %s verified", op.Name, in.Shape())
			})
		}
	})
}
