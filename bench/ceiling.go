package bench

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/ceiling"
)

// Copy-ceiling buffer sizes: each of the two buffers holds at least this many bytes, and at
// least the largest case's main array in float64 (up to the copy kernel's 2^31-1 floats).
// Quick mode uses less: 256 MiB copies take long on a CPU device shared by several
// processes, while 64 MiB still exceeds the caches of the devices we see (50 MB L2 on an
// H100; a few tens of MB of L3 on a server CPU).
const (
	copyBytes      = 256 << 20
	copyBytesQuick = 64 << 20
)

// copyCeiling measures device-to-device copy bandwidth (bytes read plus written per second)
// two ways: the API's buffer copy (clEnqueueCopyBuffer, cuMemcpyDtoD) and the suite's copy
// kernel (ceiling.Copy, the stream family's copy). It returns the better, since each loses somewhere: PoCL's buffer copy is one
// thread's memcpy (19.8 GB/s against 68.6 GB/s for the kernel on 16 cores), while a float32
// kernel moving 4 bytes per work-item stays at 71% of the H100's buffer copy (2026-11-21).
// A method whose device times are not all positive is no measurement: when neither gives
// one, gbs is 0 and how is InvalidPrefix followed by why (see valid.go).
func copyCeiling(ctx context.Context, cfg Config, q *engine.Queue) (gbs float64, how string, bytes int64, err error) {
	want := copyBytes
	if cfg.Quick {
		want = copyBytesQuick
	}
	largest := 0
	for _, op := range cfg.Ops {
		for _, s := range cfg.sizes(op, q.Device().Info().Kind) {
			largest = max(largest, s)
		}
	}
	n := max(largest*8, want) / 4
	if m := q.Device().Info().MaxAllocBytes / 4; m > 0 && int64(n) > m {
		n = int(m)
	}
	n = min(n, math.MaxInt32&^255) // the copy kernel's limit: a case of 1G elements asks 2^31 floats
	src, err := engine.NewBuffer[float32](q.Device(), n)
	if err != nil {
		return 0, "", 0, err
	}
	defer src.Close()
	dst, err := engine.NewBuffer[float32](q.Device(), n)
	if err != nil {
		return 0, "", 0, err
	}
	defer dst.Close()
	var invalid []string // why each method's time is no measurement
	c, err := ceiling.NewCopy(q.Device())
	if err != nil {
		return 0, "", 0, err
	}
	defer c.Close()
	for _, m := range []struct {
		how string
		run func(ctx context.Context, q *engine.Queue) error
	}{
		{"buffer copy", func(_ context.Context, q *engine.Queue) error { return dst.CopyFrom(q, 0, src, 0, n) }},
		{"copy kernel", func(_ context.Context, q *engine.Queue) error { return c.Run(q, dst, src) }},
	} {
		v := float32(len(m.how)) // a different value per method, so each copy is checked
		if err := src.Fill(q, 0, n, v); err != nil {
			return 0, "", 0, err
		}
		samples, _, err := timeRuns(ctx, cfg, q, m.run)
		if err != nil {
			return 0, "", 0, fmt.Errorf("%s: %w", m.how, err)
		}
		// A ceiling from a copy that did nothing would flatter every case.
		var probe [1]float32
		if err := dst.Read(ctx, q, n-1, probe[:]); err != nil {
			return 0, "", 0, err
		}
		if probe[0] != v {
			return 0, "", 0, fmt.Errorf("%w: %s left %v, want %v", ErrVerify, m.how, probe[0], v)
		}
		if why := timingInvalid(samples); why != "" {
			invalid = append(invalid, m.how+": "+strings.TrimPrefix(why, InvalidPrefix))
			continue
		}
		if g := 2 * float64(n) * 4 / Summarize(samples).Median.Seconds() / 1e9; finite(g) && g > gbs {
			gbs, how = g, m.how
		}
	}
	if gbs == 0 && len(invalid) > 0 {
		how = InvalidPrefix + strings.Join(invalid, "; ")
	}
	return gbs, how, int64(n) * 4, nil
}
