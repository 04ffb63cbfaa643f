package cuda

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// The tests in this file need no GPU: TestFakeDriverOccupancy runs on the fake libraries
// of fault_test.go, the others need no library at all.

func init() {
	// The fake driver's occupancy: FAKE_ACTIVE_BLOCKS blocks, or the error
	// FAKE_OCCUPANCY_FAIL.
	fakeBodies["cuOccupancyMaxActiveBlocksPerMultiprocessor"] = `(int *n, void *f, int block, size_t shared) { *n = env("FAKE_ACTIVE_BLOCKS", 0); return env("FAKE_OCCUPANCY_FAIL", 0); }`
}

// The per-multiprocessor limits of devices as their drivers report them
// (cuDeviceGetAttribute): the CUDA C Programming Guide's table of compute capabilities,
// and the shared memory per multiprocessor, with opt-in and reserved, of each part.
var (
	h100 = smLimits{computeMajor: 9, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 2048, blocksPerSM: 32,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 228 << 10, sharedPerBlock: 227 << 10, reservedPerBlock: 1024}
	a100 = smLimits{computeMajor: 8, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 2048, blocksPerSM: 32,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 164 << 10, sharedPerBlock: 163 << 10, reservedPerBlock: 1024}
	rtx3090 = smLimits{computeMajor: 8, computeMinor: 6, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 1536, blocksPerSM: 16,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 100 << 10, sharedPerBlock: 99 << 10, reservedPerBlock: 1024}
	t4 = smLimits{computeMajor: 7, computeMinor: 5, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 1024, blocksPerSM: 16,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 64 << 10, sharedPerBlock: 64 << 10}
	v100 = smLimits{computeMajor: 7, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 2048, blocksPerSM: 32,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 96 << 10, sharedPerBlock: 96 << 10}
	p100 = smLimits{computeMajor: 6, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 2048, blocksPerSM: 32,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 64 << 10, sharedPerBlock: 48 << 10}
	gtx1080 = smLimits{computeMajor: 6, computeMinor: 1, warpSize: 32, threadsPerBlock: 1024, threadsPerSM: 2048, blocksPerSM: 32,
		registersPerSM: 65536, registersPerBlock: 65536, sharedPerSM: 96 << 10, sharedPerBlock: 48 << 10}
)

// TestBlockLimits checks the bound of each resource and the limiting factor against
// answers worked out by hand with the rules of CUDA's occupancy calculator
// (cuda_occupancy.h); the active blocks are the least bound, as the driver would answer.
func TestBlockLimits(t *testing.T) {
	const inf = unlimitedLimit
	for _, c := range []struct {
		name     string
		dev      smLimits
		use      blockUse
		want     blockLimits
		limiter  driver.Limiter
		fraction float64
	}{
		// 8 warps of 32 registers: 1 KiB registers a warp, 16 warps a sub-partition.
		{"h100 256x32", h100, blockUse{256, 32, 0}, blockLimits{8, 32, 8, 228}, driver.LimitThreads, 1},
		// 2 KiB a warp: 8 warps a sub-partition, 32 an SM, 4 blocks.
		{"h100 256x64", h100, blockUse{256, 64, 0}, blockLimits{8, 32, 4, 228}, driver.LimitRegisters, 0.5},
		// 48 KiB static and 1 KiB reserved: 228 KiB hold 4.
		{"h100 128x32 48KiB", h100, blockUse{128, 32, 48 << 10}, blockLimits{16, 32, 16, 4}, driver.LimitSharedMemory, 0.25},
		// 100 KiB dynamic: 101 KiB a block, 2 of them.
		{"h100 256x32 100KiB", h100, blockUse{256, 32, 100 << 10}, blockLimits{8, 32, 8, 2}, driver.LimitSharedMemory, 0.25},
		// One warp a block: 32 blocks of an SM before its warps or registers run out.
		{"h100 32x16", h100, blockUse{32, 16, 0}, blockLimits{64, 32, 128, 228}, driver.LimitBlocks, 0.5},
		// 3 warps of 40 registers (1280 a warp): 12 warps a sub-partition, 48 an SM.
		{"h100 96x40", h100, blockUse{96, 40, 0}, blockLimits{21, 32, 16, 228}, driver.LimitRegisters, 0.75},
		// 72 registers: 2304 a warp, 73728 for 32 warps, more than a block may have.
		{"h100 1024x72", h100, blockUse{1024, 72, 0}, blockLimits{2, 32, 0, 228}, driver.LimitRegisters, 0},
		// The most registers a thread may have from sm_70: 8 KiB a warp, 2 warps a
		// sub-partition.
		{"h100 64x256", h100, blockUse{64, 256, 0}, blockLimits{32, 32, 4, 228}, driver.LimitRegisters, 0.125},
		// No registers reported, no shared memory but the reserve.
		{"h100 1024x0", h100, blockUse{1024, 0, 0}, blockLimits{2, 32, inf, 228}, driver.LimitThreads, 1},
		// A block beyond the device's largest.
		{"h100 2048", h100, blockUse{2048, 32, 0}, blockLimits{0, 32, 1, 228}, driver.LimitThreads, 0},
		// All the shared memory a block may have with the opt-in, and 1 byte more.
		{"h100 227KiB", h100, blockUse{256, 32, 227 << 10}, blockLimits{8, 32, 8, 1}, driver.LimitSharedMemory, 0.125},
		{"h100 227KiB+1", h100, blockUse{256, 32, 227<<10 + 1}, blockLimits{8, 32, 8, 0}, driver.LimitSharedMemory, 0},

		{"a100 256x32", a100, blockUse{256, 32, 0}, blockLimits{8, 32, 8, 164}, driver.LimitThreads, 1},
		{"a100 128x32 48KiB", a100, blockUse{128, 32, 48 << 10}, blockLimits{16, 32, 16, 3}, driver.LimitSharedMemory, 0.1875},
		// 10 bytes round up to the granule of 128 with the reserve: 1152 a block.
		{"a100 32x8 10B", a100, blockUse{32, 8, 10}, blockLimits{64, 32, 256, 145}, driver.LimitBlocks, 0.5},

		// 48 warps an SM.
		{"3090 256x32", rtx3090, blockUse{256, 32, 0}, blockLimits{6, 16, 8, 100}, driver.LimitThreads, 1},
		{"3090 64x32", rtx3090, blockUse{64, 32, 0}, blockLimits{24, 16, 32, 100}, driver.LimitBlocks, 2.0 / 3},
		// 48 registers, 1536 a warp: 10 warps a sub-partition, 40 an SM, 2 blocks of 16.
		{"3090 512x48", rtx3090, blockUse{512, 48, 0}, blockLimits{3, 16, 2, 100}, driver.LimitRegisters, 2.0 / 3},

		// Before sm_80, granules of 256 bytes and no reserve: 10000 bytes take 10240.
		{"t4 128 10000B", t4, blockUse{128, 0, 10000}, blockLimits{8, 16, inf, 6}, driver.LimitSharedMemory, 0.75},
		{"t4 1024x64", t4, blockUse{1024, 64, 0}, blockLimits{1, 16, 1, inf}, driver.LimitThreads, 1},
		// The calculator's example: 256 threads, 32 registers, 4 KiB of shared memory.
		{"v100 256x32 4KiB", v100, blockUse{256, 32, 4 << 10}, blockLimits{8, 32, 8, 24}, driver.LimitThreads, 1},

		// sm_60 has 2 sub-partitions: 21 warps of 48 registers each (1536 a warp), where
		// sm_61's 4 hold 10 each.
		{"p100 64x48", p100, blockUse{64, 48, 0}, blockLimits{32, 32, 21, inf}, driver.LimitRegisters, 42.0 / 64},
		{"1080 64x48", gtx1080, blockUse{64, 48, 0}, blockLimits{32, 32, 20, inf}, driver.LimitRegisters, 40.0 / 64},
		// 256 registers a thread: one more than sm_6x allows.
		{"p100 64x256", p100, blockUse{64, 256, 0}, blockLimits{32, 32, 0, inf}, driver.LimitRegisters, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.dev.blockLimits(c.use)
			if b != c.want {
				t.Errorf("blockLimits(%+v) = %+v; want %+v", c.use, b, c.want)
			}
			active := min(b.threads, b.blocks, b.registers, b.shared)
			o := c.dev.occupancy(c.use, active)
			if o.Limiter != c.limiter || math.Abs(o.Fraction-c.fraction) > 1e-12 || o.ActiveBlocks != active || o.BlockSize != c.use.threads {
				t.Errorf("occupancy = %+v; want %d blocks, occupancy %.4f, limited by %q", o, active, c.fraction, c.limiter)
			}
			if want := c.dev.threadsPerSM / 32; o.MaxWarps != want || o.WarpSize != 32 || o.ActiveWarps != active*((c.use.threads+31)/32) {
				t.Errorf("warps: %d of %d (warp %d)", o.ActiveWarps, o.MaxWarps, o.WarpSize)
			}
		})
	}
}

// TestLimiterUnexplained checks that a limiting factor is named only where the bounds
// explain the driver's answer: a bound below it, no bound equal to it, or limits not
// reported leave it unknown.
func TestLimiterUnexplained(t *testing.T) {
	use := blockUse{256, 64, 0} // on an H100: bounds 8 (threads), 32, 4 (registers), 228
	for _, c := range []struct {
		name   string
		dev    smLimits
		active int
		want   driver.Limiter
	}{
		{"the driver's answer", h100, 4, driver.LimitRegisters},
		{"a bound below the driver's answer", h100, 8, driver.LimitUnknown},
		{"no bound equal to it", h100, 3, driver.LimitUnknown},
		{"registers per SM not reported", func() smLimits { l := h100; l.registersPerSM = 0; return l }(), 4, driver.LimitUnknown},
		{"blocks per SM not reported, not limiting", func() smLimits { l := h100; l.blocksPerSM = 0; return l }(), 4, driver.LimitRegisters},
		{"nothing reported", smLimits{}, 4, driver.LimitUnknown},
	} {
		o := c.dev.occupancy(use, c.active)
		if o.Limiter != c.want {
			t.Errorf("%s: limiter %q; want %q", c.name, o.Limiter, c.want)
		}
	}
	if o := (smLimits{}).occupancy(use, 4); o.Fraction != 0 || o.MaxWarps != 0 || o.ActiveBlocks != 4 {
		t.Errorf("without limits: %+v; want the blocks alone", o)
	}
}

// TestLimitsOf checks that the limits come from the device's properties and the
// attributes the probe does not read, by their numbers in cuda.h.
func TestLimitsOf(t *testing.T) {
	p := Properties{ComputeCapability: [2]int{9, 0}, WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerMultiprocessor: 2048,
		RegistersPerBlock: 65536, SharedMemPerMultiprocessor: 228 << 10, SharedMemPerBlock: 48 << 10, SharedMemPerBlockOptin: 227 << 10}
	attrs := map[int]int{82: 65536, 106: 32, 111: 1024}
	if got := limitsOf(p, func(a int) int { return attrs[a] }); got != h100 {
		t.Errorf("limitsOf = %+v; want %+v", got, h100)
	}
}

// TestFakeDriverOccupancy runs Kernel.Occupancy through engine against the fake driver,
// made an A100 (sm_80, 164 KiB of shared memory and 64 Ki registers a multiprocessor) whose
// kernel uses 64 registers: the driver's blocks come back with the warps, the fraction and
// the limiter; an answer the limits do not explain has no limiter; a failure names the
// call; a closed kernel is refused.
func TestFakeDriverOccupancy(t *testing.T) {
	fakeBackend(t) // the libraries, once
	for k, v := range map[string]string{"FAKE_ATTR_81": "167936", "FAKE_ATTR_82": "65536", "FAKE_ATTR_106": "32", "FAKE_ATTR_111": "1024",
		"FAKE_ATTR_97": "166912", "FAKE_FUNC_ATTR_4": "64", "FAKE_ACTIVE_BLOCKS": "4"} {
		t.Setenv(k, v)
	}
	r := openFakeRun(t, fakeBackend(t))
	o, err := r.k.Occupancy(256, 0)
	want := engine.Occupancy{BlockSize: 256, ActiveBlocks: 4, ActiveWarps: 32, MaxWarps: 64, WarpSize: 32, Fraction: 0.5, Limiter: engine.LimitRegisters}
	if err != nil || o != want {
		t.Errorf("Occupancy(256, 0) = %+v, %v; want %+v", o, err, want)
	}
	// 100 KiB of dynamic shared memory (past the 48 KiB a block has without the opt-in):
	// one block of 101 KiB fits in 164 KiB.
	t.Setenv("FAKE_ACTIVE_BLOCKS", "1")
	o, err = r.k.Occupancy(256, 100<<10)
	if err != nil || o.ActiveBlocks != 1 || o.DynamicSharedBytes != 100<<10 || o.Limiter != engine.LimitSharedMemory || o.Fraction != 0.125 {
		t.Errorf("Occupancy(256, 100 KiB) = %+v, %v; want 1 block limited by shared memory", o, err)
	}
	t.Setenv("FAKE_ACTIVE_BLOCKS", "5") // more than 64 registers allow
	if o, err = r.k.Occupancy(256, 0); err != nil || o.ActiveBlocks != 5 || o.Limiter != engine.LimitUnknown {
		t.Errorf("an answer the limits do not explain: %+v, %v; want 5 blocks, no limiter", o, err)
	}
	t.Setenv("FAKE_OCCUPANCY_FAIL", "1")
	_, err = r.k.Occupancy(256, 0)
	if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "cuOccupancyMaxActiveBlocksPerMultiprocessor(k, 256, 0): CUDA_ERROR_INVALID_VALUE") {
		t.Errorf("a failed call: %v", err)
	}
	t.Logf("%v", err)
	t.Setenv("FAKE_OCCUPANCY_FAIL", "0")
	t.Setenv("FAKE_ACTIVE_BLOCKS", "-1")
	if _, err = r.k.Occupancy(256, 0); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "answers -1 blocks") {
		t.Errorf("a negative answer: %v", err)
	}
	if err := r.closeAll(); err != nil {
		t.Errorf("closing: %v", err)
	}
	if _, err = r.k.Occupancy(256, 0); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("a closed kernel: %v", err)
	}
}

// occupancySource has kernels of different resource use: few registers, many registers,
// 32 KiB of static shared memory, dynamic shared memory.
const occupancySource = `
extern "C" __global__ void light(float *y, const float *x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void heavy(float *y, const float *x, int n) {
	float acc[48];
	#pragma unroll
	for (int j = 0; j < 48; j++) acc[j] = x[(threadIdx.x + j * 97) % n];
	for (int k = 0; k < n; k++) {
		#pragma unroll
		for (int j = 0; j < 48; j++) acc[j] = acc[j] * acc[(j + 1) % 48] + x[(k + j) % n];
	}
	float s = 0;
	#pragma unroll
	for (int j = 0; j < 48; j++) s += acc[j];
	y[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void tile(float *out) {
	__shared__ float s[8192];
	for (int i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = i;
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x * 33) % 8192];
}
extern "C" __global__ void dyn(float *out) {
	extern __shared__ float s[];
	s[threadIdx.x] = threadIdx.x;
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
`

// TestDeviceOccupancy asks the occupancy of kernels of different resource use over block
// sizes and dynamic shared memory on every CUDA device: each answer has a limiter, that
// is, the multiprocessor's limits explain the driver's figure; the warps and fraction
// agree with it; all the shared memory a block may have leaves one block, limited by
// shared memory where nothing else allows just one.
func TestDeviceOccupancy(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: occupancySource})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		p := dev.Driver().(Device).Properties()
		maxShared := dev.Info().MaxLocalBytes()
		for _, name := range []string{"light", "heavy", "tile", "dyn"} {
			k, err := prog.Kernel(name)
			if err != nil {
				t.Fatal(err)
			}
			a := k.Attributes()
			t.Logf("%s: %d registers, %d bytes static shared, %d private, up to %d threads", name, a.Registers, a.LocalBytes, a.PrivateBytes, a.MaxWorkGroupSize)
			for _, block := range []int{32, 64, 96, 128, 192, 256, 384, 512, 768, 1024} {
				if block > k.MaxWorkGroupSize() {
					continue
				}
				for _, dyn := range []int64{0, 1000, 16 << 10, 48 << 10, 100 << 10, maxShared - a.LocalBytes} {
					if dyn+a.LocalBytes > maxShared {
						continue
					}
					o, err := k.Occupancy(block, dyn)
					if err != nil {
						t.Errorf("%s(%d, %d): %v", name, block, dyn, err)
						continue
					}
					warps := (block + p.WarpSize - 1) / p.WarpSize
					if o.ActiveBlocks < 1 || o.Limiter == engine.LimitUnknown || o.ActiveWarps != o.ActiveBlocks*warps ||
						o.MaxWarps != p.MaxThreadsPerMultiprocessor/p.WarpSize || o.Fraction <= 0 || o.Fraction > 1 {
						t.Errorf("%s(%d, %d) = %+v", name, block, dyn, o)
					}
					// Up to 256 threads, registers and threads allow more than one block of
					// every kernel here (heavy's 72 registers allow one of 512).
					if dyn == maxShared-a.LocalBytes && (o.ActiveBlocks != 1 || (block <= 256 && o.Limiter != engine.LimitSharedMemory)) {
						t.Errorf("%s(%d, all the shared memory) = %+v; want 1 block limited by shared memory", name, block, o)
					}
				}
			}
			if o, err := k.Occupancy(256, 0); err == nil {
				t.Logf("%s(256, 0): %d blocks, %d of %d warps (%.0f%%), %s", name, o.ActiveBlocks, o.ActiveWarps, o.MaxWarps, 100*o.Fraction, o.Limiter)
			}
			k.Close()
		}
	})
}
