package kerneltest

import (
	"context"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/platform"
)

// SplitDevices returns the devices the split tests run on, closed when the test ends:
// every OpenCL device found, or with twins only those of the first one's name, platform
// and compute units (which compute alike); the first device opened twice where that
// leaves one (two openings are two devices to the engine).
func SplitDevices(t *testing.T, twins bool) []*engine.Device {
	t.Helper()
	dis, err := platform.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var first engine.DeviceInfo
	for _, d := range dis.Devices {
		if d.Backend != "opencl" {
			continue
		}
		if len(ids) == 0 {
			first = d.DeviceInfo
		} else if twins && (d.Name != first.Name || d.Platform != first.Platform || d.ComputeUnits != first.ComputeUnits) {
			continue
		}
		ids = append(ids, d.ID)
	}
	if len(ids) == 0 {
		t.Skipf("no OpenCL device found: %v", dis.Unavailable())
	}
	if len(ids) == 1 {
		ids = append(ids, ids[0])
	}
	devs := make([]*engine.Device, len(ids))
	for i, id := range ids {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	return devs
}

// Evenly returns n equal fractions, the shares of a split evenly divided.
func Evenly(n int) []float64 {
	f := make([]float64, n)
	for i := range f {
		f[i] = 1 / float64(n)
	}
	return f
}

// SplitFractions returns the fixed shares the tests use for n devices: halves, 13/87 and
// all on the first, given to the first two devices (the others get none), and an even
// split where there are more than two.
func SplitFractions(n int) [][]float64 {
	pair := func(a, b float64) []float64 {
		f := make([]float64, n)
		f[0], f[1] = a, b
		return f
	}
	fs := [][]float64{pair(0.5, 0.5), pair(0.13, 0.87), pair(1, 0)}
	if n > 2 {
		even := make([]float64, n)
		for i := range even {
			even[i] = 1 / float64(n)
		}
		fs = append(fs, even)
	}
	return fs
}

// CheckShares checks that the shares cover the n units once, with their fractions, and
// give nothing to a device of a zero fraction in f (nil: measured shares).
func CheckShares(t *testing.T, sh []kernels.Share, n int, f []float64) {
	t.Helper()
	sum := 0
	for i, s := range sh {
		if s.Units < 0 || math.Abs(s.Fraction-float64(s.Units)/float64(n)) > 1e-12 || f != nil && f[i] == 0 && s.Units != 0 {
			t.Fatalf("share %+v of %d units (fractions %v)", s, n, f)
		}
		sum += s.Units
	}
	if sum != n {
		t.Fatalf("shares %+v cover %d units, want %d", sh, sum, n)
	}
}
