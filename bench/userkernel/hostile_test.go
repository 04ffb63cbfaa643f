//go:build unix

package userkernel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
)

// hugeNPY returns a 128-byte .npy file whose header claims shape of float32 and which
// holds no data.
func hugeNPY(shape string) []byte {
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }"
	b := append([]byte(npyMagic), 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(128-10))
	b = append(b, dict...)
	for len(b) < 127 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

// TestNPYHostileFiles checks the .npy reader on every hostile file: a FIFO with no writer,
// a link to /dev/zero, a directory, an empty file, and a 128-byte file whose header claims
// 2^38 float32 elements (1 TiB). Each is an error at once, naming what is wrong, with no
// allocation of what a header claims; before, the huge header was a fatal out of memory
// and the FIFO a wait for ever.
func TestNPYHostileFiles(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	if err := syscall.Mkfifo(path("fifo.npy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", path("zero.npy")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path("dir.npy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty.npy":     nil,
		"huge.npy":      hugeNPY("(262144, 1048576)"),
		"huge1d.npy":    hugeNPY("(274877906944,)"),
		"beyond.npy":    hugeNPY("(1099511627776, 2)"),
		"truncated.npy": hugeNPY("(4,)")[:40],
	} {
		if err := os.WriteFile(path(name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ file, want string }{
		{"fifo.npy", "is a named pipe (FIFO), not a regular file"},
		{"zero.npy", "(a link to /dev/zero) is a character device, not a regular file"},
		{"dir.npy", "is a directory, not a regular file"},
		{"empty.npy", "not a .npy file: EOF"},
		{"huge.npy", ".npy shape [262144 1048576] of float32 needs 1099511627776 bytes of data; the file holds 0 after its 128-byte header"},
		{"huge1d.npy", ".npy shape [274877906944] of float32 needs 1099511627776 bytes of data; the file holds 0 after its 128-byte header"},
		{"beyond.npy", "more than 1099511627776 elements"},
		{"truncated.npy", "truncated .npy header: it says 118 bytes, the file holds 30 after the first 10"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			done := make(chan error, 1)
			go func() {
				_, err := ReadNPYFile(path(tc.file))
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("ReadNPYFile still reading after 5 s")
			}
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("ReadNPYFile(%s) = %v; want an error naming the file and saying %q", tc.file, err, tc.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
				t.Errorf("ReadNPYFile(%s) allocated %d bytes", tc.file, grew)
			}
		})
	}
	// From a reader of unknown length, the huge header is an error once the input ends.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeNPY(bytes.NewReader(hugeNPY("(262144, 1048576)")))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "want 1099511627776 bytes for shape [262144 1048576], the input holds 0") {
		t.Errorf("DecodeNPY of the huge header: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("DecodeNPY of the huge header allocated %d bytes", grew)
	}
	// As an --arg's INIT, a file is held against TYPE and SIZE before its data are read.
	for _, tc := range []struct{ spec, want string }{
		{"buf:float32:1K:" + path("huge.npy"), "holds 274877906944 elements (shape [262144 1048576]), not 1024"},
		{"buf:int32:1K:" + path("huge.npy"), "holds float32 (<f4), not int32"},
		{"buf:float32:1K:" + path("fifo.npy"), "a named pipe (FIFO)"},
	} {
		_, err := ParseArgs([]string{tc.spec}, "k", 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--arg %s: %v; want %q", tc.spec, err, tc.want)
		}
	}
}

// TestOutputSizeChecked checks that buffers are held against the host's available memory
// before their contents are made: out:float32:32G on a host with 1 GiB available is an
// error naming the argument, the size asked and what is available (wrapping
// engine.ErrOutOfMemory), and two buffers that fit alone but not together are refused at
// the second.
func TestOutputSizeChecked(t *testing.T) {
	old := hostAvailable
	hostAvailable = func() int64 { return 1 << 30 }
	t.Cleanup(func() { hostAvailable = old })
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{[]string{"scalar:int32:1", "out:float32:32G"}, `argument 1 "out:float32:32G": 32G elements need 256.0 GiB of host memory (its initial values and the copy read back); 1.0 GiB is available`},
		{[]string{"buf:float32:300M:random"}, `argument 0 "buf:float32:300M:random": 300M elements need 1.2 GiB of host memory (its initial values); 1.0 GiB is available`},
		{[]string{"buf:float32:100M", "inout:float32:100M:ones"}, `argument 1 "inout:float32:100M:ones": 100M elements need 800 MiB of host memory (its initial values and the copy read back) beside the 400 MiB of the buffers before it; 1.0 GiB is available`},
	} {
		_, err := ParseArgs(tc.specs, "k", 1)
		if !errors.Is(err, engine.ErrOutOfMemory) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want ErrOutOfMemory saying %q", tc.specs, err, tc.want)
		}
	}
	// At the limit exactly: 4 MiB of input and 2x4 MiB of output in 12 MiB; a byte more is refused.
	hostAvailable = func() int64 { return 12 << 20 }
	if _, err := ParseArgs([]string{"buf:float32:1M", "out:float32:1M"}, "k", 1); err != nil {
		t.Errorf("12 MiB in 12 MiB refused: %v", err)
	}
	if _, err := ParseArgs([]string{"buf:uint8:4194305", "out:float32:1M"}, "k", 1); !errors.Is(err, engine.ErrOutOfMemory) {
		t.Errorf("a byte above 12 MiB: %v, want ErrOutOfMemory", err)
	}
}

// TestDeviceLimits checks, on every OpenCL device (PoCL, Mesa), that a range the device
// cannot run is refused before the launch with the numbers (2G,2G: PoCL aborted inside
// its scheduler, Mesa ran nothing; 1G,1G,1G: more work-items than size_t counts, a launch
// that did nothing and reported a time), and that buffers the device cannot hold are
// refused before any is made, naming the argument and the limit.
func TestDeviceLimits(t *testing.T) {
	for _, id := range enginetest.DeviceIDs(t, "opencl") {
		t.Run(id, func(t *testing.T) {
			dev, err := engine.Open(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			args, err := ParseArgs([]string{"out:int32:1"}, "k", 1)
			if err != nil {
				t.Fatal(err)
			}
			src := `__kernel void k(__global int *o) { if (get_global_id(0) == 0) o[0] = 7; }`
			for _, tc := range []struct {
				global, local []int
				want          string
			}{
				{[]int{2 << 30, 2 << 30}, nil, "global size 2147483648x2147483648 in work-groups of"},
				{[]int{2 << 30, 2 << 30}, []int{4, 8}, "global size 2147483648x2147483648 in work-groups of 4x8 is 144115188075855872 work-groups; " + id},
				{[]int{16 << 20, 16 << 20}, []int{4, 8}, "is 8796093022208 work-groups; " + id},
				{[]int{1 << 30, 1 << 30, 1 << 30}, nil, "global size 1073741824x1073741824x1073741824 is about 2^90 work-items, more than a 64-bit size_t counts (2^63)"},
			} {
				start := time.Now()
				_, err := Run(context.Background(), dev, &Launch{File: "k.cl", Source: src, Kernel: "k", Args: args, Global: tc.global, Local: tc.local})
				var fit *FitError
				if !errors.As(err, &fit) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("global %v local %v: %v; want a FitError saying %q", tc.global, tc.local, err, tc.want)
				}
				if took := time.Since(start); took > 30*time.Second {
					t.Errorf("global %v: refused after %v", tc.global, took)
				}
			}
			// The largest count of work-groups is accepted, one more refused.
			if err := CheckRange(dev, engine.Range1D(1<<32-1, 1)); err != nil {
				t.Errorf("2^32-1 work-groups: %v", err)
			}
			if err := CheckRange(dev, engine.Range2D(1<<16, 1<<16, 1, 1)); err == nil {
				t.Error("2^32 work-groups accepted")
			}

			info := dev.Info()
			if info.MaxAllocBytes <= 0 {
				t.Skip("the device reports no largest allocation")
			}
			f32, _ := LookupType("float32")
			big := &Arg{Index: 1, Spec: "out:float32:BIG", Kind: Out, Type: f32, Len: int(info.MaxAllocBytes/4) + 1}
			small := &Arg{Index: 0, Spec: "scalar:int32:1", Kind: Scalar}
			err = CheckDevice(dev, []*Arg{small, big})
			if !errors.Is(err, engine.ErrOutOfMemory) || !strings.Contains(err.Error(), `argument 1 "out:float32:BIG"`) || !strings.Contains(err.Error(), "above the largest buffer "+id) {
				t.Errorf("a buffer above MaxAllocBytes (%d): %v", info.MaxAllocBytes, err)
			}
			var bufs []*Arg
			for i := int64(0); i*info.MaxAllocBytes <= info.GlobalMemBytes; i++ {
				bufs = append(bufs, &Arg{Index: int(i), Spec: "buf:float32:MAX", Kind: Buf, Type: f32, Len: int(info.MaxAllocBytes / 4)})
			}
			err = CheckDevice(dev, bufs)
			if !errors.Is(err, engine.ErrOutOfMemory) || !strings.Contains(err.Error(), "of device memory; "+id) {
				t.Errorf("buffers above the global memory (%d): %v", info.GlobalMemBytes, err)
			}
			if err := CheckDevice(dev, bufs[:1]); err != nil {
				t.Errorf("one buffer of the largest allocation: %v", err)
			}
		})
	}
}

// FuzzReadNPY feeds the .npy reader arbitrary bytes, from the files EncodeNPY writes of
// every type and from hand-made headers: it must not panic, must allocate no more than the
// input holds, and must agree with itself whether the input's length is known (a file) or
// not (a stream); what it accepts holds as many bytes as its shape and type say.
func FuzzReadNPY(f *testing.F) {
	for _, typ := range Types() {
		f.Add(EncodeNPY(typ, make([]byte, 3*typ.Size)))
	}
	f.Add(hugeNPY("(262144, 1048576)"))
	f.Add(hugeNPY("(2, 3)")[:64])
	f.Add(append(hugeNPY("(2,)"), make([]byte, 8)...))
	v2 := append([]byte(npyMagic), 2, 0)
	v2 = binary.LittleEndian.AppendUint32(v2, 48)
	v2 = append(v2, []byte(`{"shape": (2,), "fortran_order": False, "descr": "<i4"}`)[:48]...)
	f.Add(append(v2, make([]byte, 8)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeNPY(bytes.NewReader(data))
		b, errKnown := decodeNPY(bytes.NewReader(data), int64(len(data)), nil)
		if (err == nil) != (errKnown == nil) {
			t.Fatalf("unknown length: %v; known length: %v", err, errKnown)
		}
		if err != nil {
			return
		}
		n := 1
		for _, d := range a.Shape {
			n *= d
		}
		if len(a.Data) != n*a.Type.Size || len(a.Data) > len(data) {
			t.Fatalf("shape %v of %s with %d bytes of data, from %d bytes", a.Shape, a.Type.Name, len(a.Data), len(data))
		}
		if !bytes.Equal(a.Data, b.Data) || a.Type.Name != b.Type.Name {
			t.Fatal("the two reads differ")
		}
		if _, ok := kernels.TypeByName(a.Type.Name); !ok {
			t.Fatalf("type %s is no element type", a.Type.Name)
		}
		// What was read writes back as a 1-D file that reads back the same.
		c, err := DecodeNPY(bytes.NewReader(EncodeNPY(a.Type, a.Data)))
		if err != nil || !bytes.Equal(c.Data, a.Data) {
			t.Fatalf("re-encoded: %v", err)
		}
	})
}
