package bench

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// Reading is one telemetry sample of a GPU (the CLI takes them from platform/telemetry,
// which reads NVML). Missing names the readings that could not be taken.
type Reading struct {
	SMClockMHz   float64
	PowerW       float64
	TemperatureC float64
	Missing      []string
}

// Sampler reads the telemetry of one GPU by PCI bus ID. It must be safe for use by a
// goroutine other than Run's. If it is an io.Closer, Run closes it at the end.
type Sampler interface {
	Sample(busID string) (Reading, error)
}

// DefaultTelemetryInterval is the sampling period used when Config.TelemetryInterval is 0.
const DefaultTelemetryInterval = 200 * time.Millisecond

// Telemetry summarizes the samples taken while one device ran its part of the bench, or
// says why there are none.
type Telemetry struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"` // why not available
	BusID     string `json:"pci_bus_id,omitempty"`
	Samples   int    `json:"samples"`
	// IntervalMS is the sampling period in milliseconds.
	IntervalMS int `json:"interval_ms"`
	// SMClockMHz, PowerW and TemperatureC summarize the samples; nil without samples.
	SMClockMHz   *Spread  `json:"sm_clock_mhz,omitempty"`
	PowerW       *Spread  `json:"power_w,omitempty"`
	TemperatureC *Spread  `json:"temperature_c,omitempty"`
	Errors       int      `json:"errors,omitempty"`  // samples that failed
	Missing      []string `json:"missing,omitempty"` // readings NVML could not give
}

// Spread is the minimum, median and maximum of a series of readings.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func spreadOf(xs []float64) *Spread {
	if len(xs) == 0 {
		return nil
	}
	s := &Spread{Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Median = medianFloat(append([]float64(nil), xs...))
	return s
}

// String formats the spread as "min/median/max".
func (s *Spread) String() string {
	if s == nil {
		return "-"
	}
	return term.Float(s.Min) + "/" + term.Float(s.Median) + "/" + term.Float(s.Max)
}

// telemetrySource opens the Sampler at most once per Run, on the first device that can use
// it, so that a run on devices NVML cannot read never loads NVML.
type telemetrySource struct {
	open   func() (Sampler, error)
	opened bool
	s      Sampler
	err    error
}

func newTelemetrySource(open func() (Sampler, error)) *telemetrySource {
	return &telemetrySource{open: open}
}

func (t *telemetrySource) sampler() (Sampler, error) {
	if !t.opened {
		t.opened = true
		t.s, t.err = t.open()
	}
	return t.s, t.err
}

func (t *telemetrySource) close() {
	if c, ok := t.s.(io.Closer); ok {
		c.Close()
	}
}

// start begins sampling dev's card, when it has one NVML can read, every interval; the
// returned function stops and summarizes.
func (t *telemetrySource) start(ctx context.Context, dev engine.DeviceInfo, interval time.Duration) func() Telemetry {
	if interval <= 0 {
		interval = DefaultTelemetryInterval
	}
	none := func(why string) func() Telemetry {
		return func() Telemetry { return Telemetry{Reason: why, IntervalMS: int(interval / time.Millisecond)} }
	}
	switch {
	case t.open == nil:
		return none("not requested")
	case dev.PCIBusID == "":
		return none("the device reports no PCI bus ID (NVML samples GPUs by bus ID)")
	case !strings.Contains(strings.ToUpper(dev.Vendor), "NVIDIA"):
		return none("NVML reads NVIDIA GPUs only; vendor is " + dev.Vendor)
	}
	s, err := t.sampler()
	if err != nil {
		return none(err.Error())
	}
	return sampleEvery(ctx, s, dev.PCIBusID, interval)
}

// sampleEvery samples busID from a goroutine, at once and then every interval, until the
// returned function is called; that function returns the summary.
func sampleEvery(ctx context.Context, s Sampler, busID string, interval time.Duration) func() Telemetry {
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg      sync.WaitGroup
		samples []Reading
		errs    int
		lastErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if smp, err := s.Sample(busID); err != nil {
				errs, lastErr = errs+1, err
			} else {
				samples = append(samples, smp)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() Telemetry {
		cancel()
		wg.Wait()
		t := Telemetry{BusID: busID, Samples: len(samples), IntervalMS: int(interval / time.Millisecond), Errors: errs}
		if len(samples) == 0 {
			t.Reason = "no sample succeeded"
			if lastErr != nil {
				t.Reason += ": " + lastErr.Error()
			}
			return t
		}
		t.Available = true
		var clk, pow, temp []float64
		missing := map[string]bool{}
		for _, s := range samples {
			clk = append(clk, s.SMClockMHz)
			pow = append(pow, s.PowerW)
			temp = append(temp, s.TemperatureC)
			for _, m := range s.Missing {
				if !missing[m] {
					missing[m] = true
					t.Missing = append(t.Missing, m)
				}
			}
		}
		t.SMClockMHz, t.PowerW, t.TemperatureC = spreadOf(clk), spreadOf(pow), spreadOf(temp)
		return t
	}
}
