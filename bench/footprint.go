package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// The memory a case needs, estimated before its inputs are made, per byte of its main
// operand (size elements of the op's type). Measured on PoCL at 64M elements (2026-11-24,
// prism run --count 1, peak RSS less the process's base, where device memory is host
// memory too): gemm/nn/float32 28 bytes per element (7 per operand byte), fft/c2c/float32
// 22, map/fma/float32 16.5, stream/copy/float32 and map/axpy/float32 12.4,
// reduce/sum/float32 8. The host holds the inputs, the downloaded output and the float64
// reference, except in the element-wise families (stream, map), which generate and verify
// a chunk at a time; the device the inputs, outputs and scratch (rotated input sets beyond
// the first stay within kernels.RotationBytes). The factors are upper bounds with a margin.
const (
	hostBytesPerOperandByte   = 12
	deviceBytesPerOperandByte = 6
)

// footprint returns the host and device bytes a case of op at size needs at most.
func footprint(op kernels.Op, size int) (host, device int64) {
	elem := int64(4) // and for precisions that are not a storage type (tf32)
	if t, ok := kernels.TypeByName(op.Type); ok {
		elem = int64(t.Size)
	} else if op.Type == "uint8" {
		elem = 1 // bytes: the transfer and alloc families
	}
	b := int64(size) * elem
	return b * hostBytesPerOperandByte, b*deviceBytesPerOperandByte + kernels.RotateBytes
}

// checkFootprint refuses a case whose inputs would not fit the device's global memory or
// the host's available memory, before any is made: the error names the need and the limit
// and wraps engine.ErrOutOfMemory.
func checkFootprint(dev *engine.Device, op kernels.Op, size int) error {
	host, device := footprint(op, size)
	if g := dev.Info().GlobalMemBytes; g > 0 && device > g {
		return fmt.Errorf("bench: %s at %s needs about %s of device memory; %s has %s: %w",
			op.Name, FormatSize(size), FormatBytes(device), dev.ID(), FormatBytes(g), engine.ErrOutOfMemory)
	}
	if avail := HostAvailable(); avail > 0 && host > avail {
		return fmt.Errorf("bench: %s at %s needs about %s of host memory (inputs, output and the float64 reference); %s is available: %w",
			op.Name, FormatSize(size), FormatBytes(host), FormatBytes(avail), engine.ErrOutOfMemory)
	}
	return nil
}

// HostAvailable returns the host memory available to a new allocation (MemAvailable of
// /proc/meminfo), or 0 where it cannot tell.
func HostAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb <= 0 || kb > 1<<42 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
