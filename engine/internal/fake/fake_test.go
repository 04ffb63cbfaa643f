package fake

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestKernelsMatchSource checks that the Go implementations and the suite's sources declare
// the same kernels, in the same dialects, with the same number of parameters.
func TestKernelsMatchSource(t *testing.T) {
	decl := map[driver.Dialect]*regexp.Regexp{
		driver.DialectOpenCL: regexp.MustCompile(`__kernel\s+(?:__attribute__\s*\(\(.*?\)\)\s*)*void\s+(\w+)\s*\(([^)]*)\)`),
		driver.DialectCUDA:   regexp.MustCompile(`__global__\s+void\s+(\w+)\s*\(([^)]*)\)`),
	}
	var inSource []string
	for _, src := range []driver.Source{
		{Dialect: driver.DialectOpenCL, Text: suitekernels.Source, Name: "Source"},
		{Dialect: driver.DialectOpenCL, Text: suitekernels.LocalArgSource, Name: "LocalArgSource"},
		{Dialect: driver.DialectCUDA, Text: suitekernels.CUDASource, Name: "CUDASource"},
		{Dialect: driver.DialectCUDA, Text: suitekernels.ClusterSource, Name: "ClusterSource"},
		{Dialect: driver.DialectCUDA, Text: suitekernels.TensorMapSource, Name: "TensorMapSource"},
	} {
		for _, m := range decl[src.Dialect].FindAllStringSubmatch(src.Text, -1) {
			name, params := m[1], strings.Count(m[2], ",")+1
			inSource = append(inSource, name)
			im, ok := kernels[name]
			if !ok {
				t.Errorf("kernel %s of %s has no Go implementation", name, src.Name)
				continue
			}
			if im.dialect != src.Dialect {
				t.Errorf("%s: %s declares it in %s, the Go implementation in %s", name, src.Name, src.Dialect, im.dialect)
			}
			if len(im.params) != params {
				t.Errorf("%s: %s declares %d parameters, the Go implementation %d", name, src.Name, params, len(im.params))
			}
			if n, ok := suitekernels.NumArgs[name]; ok && n != params {
				t.Errorf("%s: %s declares %d parameters, NumArgs %d", name, src.Name, params, n)
			}
		}
	}
	for name := range kernels {
		if !slices.Contains(inSource, name) {
			t.Errorf("Go kernel %s is not in the suite's sources", name)
		}
	}
}

func open(t *testing.T) *device {
	t.Helper()
	d, err := New().Open(context.Background(), "0")
	if err != nil {
		t.Fatal(err)
	}
	return d.(*device)
}

func TestBuildLog(t *testing.T) {
	d := open(t)
	src := "// header\n" + suitekernels.Source + "\n" + suitekernels.BadSource
	_, err := d.Build(src, nil)
	var be *driver.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Build = %v, want a *driver.BuildError", err)
	}
	line := strings.Count("// header\n"+suitekernels.Source+"\n", "\n") + 1
	for _, want := range []string{`error: the fake backend has no Go implementation of OpenCL C kernel "prism_bad"`, suitekernels.BadIdent, ":" + strconv.Itoa(line) + ":15:"} {
		if !strings.Contains(be.Log, want) {
			t.Errorf("log does not hold %q:\n%s", want, be.Log)
		}
	}
	if strings.Contains(be.Log, "prism_axpy") {
		t.Errorf("log quotes more than the bad kernel:\n%s", be.Log)
	}
}

func TestParseOptions(t *testing.T) {
	got, err := parseOptions([]string{"-DA=1", "-D B=2 -DC", "-cl-fast-relaxed-math", "-D", "E=x"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "1", "B": "2", "C": "1", "E": "x"}
	if len(got) != len(want) {
		t.Errorf("parseOptions = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("parseOptions = %v, want %v", got, want)
		}
	}
	if _, err := parseOptions([]string{"-D"}); err == nil {
		t.Error("a trailing -D was accepted")
	}
}

// TestContract checks that calls breaking the SPI's promises are refused and counted.
func TestContract(t *testing.T) {
	d := open(t)
	dq, _ := d.NewQueue()
	db, _ := d.Alloc(16)
	p, err := d.Build(suitekernels.Source, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := p.Kernel(suitekernels.Iota)
	other := open(t)
	ob, _ := other.Alloc(16)
	var x [16]byte
	scalar := []byte{1, 0, 0, 0}
	good := []driver.Arg{{Value: scalar}, {Value: []byte{0, 0, 0, 0}}, {Buffer: db}}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Alloc 0", func() error { _, err := d.Alloc(0); return err }},
		{"Write past the end", func() error { return dq.Write(db, 8, unsafe.Pointer(&x[0]), 9) }},
		{"Read negative", func() error { return dq.Read(db, -1, unsafe.Pointer(&x[0]), 1) }},
		{"Write other device", func() error { return dq.Write(ob, 0, unsafe.Pointer(&x[0]), 1) }},
		{"Fill odd pattern", func() error { _, err := dq.Fill(db, 0, []byte{1, 2, 3}, 3); return err }},
		{"Fill misaligned", func() error { _, err := dq.Fill(db, 2, []byte{1, 2, 3, 4}, 4); return err }},
		{"Copy overlap", func() error { _, err := dq.Copy(db, 0, db, 4, 8); return err }},
		{"Launch bad range", func() error {
			_, err := dq.Launch(k, driver.Range{Dims: 1, Global: [3]int{10}, Local: [3]int{4}}, good)
			return err
		}},
		{"Launch too big work-group", func() error {
			_, err := dq.Launch(k, driver.Range{Dims: 2, Global: [3]int{32, 32}, Local: [3]int{32, 32}}, good)
			return err
		}},
		{"Launch arg count", func() error {
			_, err := dq.Launch(k, driver.Range{Dims: 1, Global: [3]int{1}, Local: [3]int{1}}, good[:2])
			return err
		}},
		{"Launch scalar for buffer", func() error {
			_, err := dq.Launch(k, driver.Range{Dims: 1, Global: [3]int{1}, Local: [3]int{1}}, []driver.Arg{good[0], good[1], {Value: scalar}})
			return err
		}},
		{"Launch other device's buffer", func() error {
			_, err := dq.Launch(k, driver.Range{Dims: 1, Global: [3]int{1}, Local: [3]int{1}}, []driver.Arg{good[0], good[1], {Buffer: ob}})
			return err
		}},
		{"Launch buffer and local size", func() error {
			_, err := dq.Launch(k, driver.Range{Dims: 1, Global: [3]int{1}, Local: [3]int{1}}, []driver.Arg{good[0], good[1], {Buffer: db, Local: 4}})
			return err
		}},
		{"Launch shared bytes above the limit", func() error {
			r := driver.Range{Dims: 1, Global: [3]int{1}, Local: [3]int{1}, SharedBytes: 96<<10 + 1}
			_, err := dq.Launch(k, r, good)
			return err
		}},
		{"Launch cluster above 8", func() error {
			r := driver.Range{Dims: 1, Global: [3]int{16}, Local: [3]int{1}, Cluster: [3]int{16, 1, 1}}
			_, err := dq.Launch(k, r, good)
			return err
		}},
		{"Launch cluster not dividing the grid", func() error {
			r := driver.Range{Dims: 1, Global: [3]int{6}, Local: [3]int{1}, Cluster: [3]int{4, 1, 1}}
			_, err := dq.Launch(k, r, good)
			return err
		}},
		{"BuildSource in a dialect the device lacks", func() error {
			cpu, err := New().Open(context.Background(), "1")
			if err != nil {
				return err
			}
			defer cpu.Close()
			_, err = cpu.(*device).BuildSource(driver.Source{Dialect: driver.DialectCUDA, Text: suitekernels.CUDASource}, nil)
			return err
		}},
	} {
		before := Violations()
		err := c.call()
		if !errors.Is(err, ErrContract) || Violations() != before+1 {
			t.Errorf("%s: %v (violations +%d), want ErrContract, counted once", c.name, err, Violations()-before)
		}
	}
	// Closing the device with objects open is a violation; so is closing one twice.
	before := Violations()
	if err := d.Close(); !errors.Is(err, ErrContract) || !strings.Contains(err.Error(), "4 objects still open") {
		t.Errorf("Close with open objects: %v", err)
	}
	if err := d.Close(); !errors.Is(err, ErrContract) {
		t.Errorf("second Close: %v", err)
	}
	if Violations() != before+2 {
		t.Errorf("violations +%d, want 2", Violations()-before)
	}
	ob.Close()
	if err := other.Close(); err != nil {
		t.Errorf("Close with everything closed: %v", err)
	}
}

// TestOutOfBounds checks that a launch indexing past a buffer fails without panicking.
func TestOutOfBounds(t *testing.T) {
	d := open(t)
	q, _ := d.NewQueue()
	b, _ := d.Alloc(16) // 4 uints
	p, _ := d.Build(suitekernels.Source, nil)
	k, _ := p.Kernel(suitekernels.Iota)
	n := []byte{8, 0, 0, 0}
	_, err := q.Launch(k, driver.Range{Dims: 1, Global: [3]int{8}, Local: [3]int{8}}, []driver.Arg{{Value: n}, {Value: make([]byte, 4)}, {Buffer: b}})
	if err == nil || !strings.Contains(err.Error(), "work-item [4 0 0]") {
		t.Errorf("out-of-bounds launch: %v, want an error naming work-item [4 0 0]", err)
	}
}

func TestCounters(t *testing.T) {
	d := open(t)
	before, total := Calls("Device.Alloc"), DeviceCalls(d, "")
	b, _ := d.Alloc(8)
	b.Close()
	if Calls("Device.Alloc") != before+1 || DeviceCalls(d, "Device.Alloc") != 1 || DeviceCalls(d, "") != total+2 {
		t.Errorf("counters: global %d, device %d, total %d", Calls("Device.Alloc")-before, DeviceCalls(d, "Device.Alloc"), DeviceCalls(d, "")-total)
	}
	defer func() {
		if recover() == nil {
			t.Error("Calls of an unknown method did not panic")
		}
	}()
	Calls("Launch")
}

// TestEncodeTensorMap checks the fake's encodings: deterministic for a buffer and a
// description, distinct for another buffer; a call that breaks the SPI's promises (a
// stride below a row, a tensor beyond its buffer, a device without tensor maps) is a
// violation.
func TestEncodeTensorMap(t *testing.T) {
	d := open(t)
	b1, _ := d.Alloc(100 * 70 * 4)
	b2, _ := d.Alloc(100 * 70 * 4)
	enc := func(b driver.Buffer, dims, strides []uint64) ([driver.TensorMapBytes]byte, error) {
		return d.EncodeTensorMap(b, driver.TensorFloat32, dims, strides, []uint32{64, 32}, driver.SwizzleNone, 0)
	}
	m1, err1 := enc(b1, []uint64{100, 70}, []uint64{400})
	m1again, err2 := enc(b1, []uint64{100, 70}, []uint64{400})
	m2, err3 := enc(b2, []uint64{100, 70}, []uint64{400})
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if m1 != m1again || m1 == m2 {
		t.Errorf("encodings: the same map differs (%v) or another buffer's is the same (%v)", m1 != m1again, m1 == m2)
	}
	tm, err := decodeTensorMap(aligned(m1))
	if err != nil || tm.buf != asBuffer(b1) || !slices.Equal(tm.dims, []uint64{100, 70}) || !slices.Equal(tm.strides, []uint64{400}) {
		t.Errorf("decoded %+v, %v", tm, err)
	}
	before := Violations()
	for _, c := range []struct{ dims, strides []uint64 }{{[]uint64{100, 70}, []uint64{384}}, {[]uint64{100, 71}, []uint64{400}}} {
		if _, err := enc(b1, c.dims, c.strides); !errors.Is(err, ErrContract) {
			t.Errorf("dims %v, strides %v: %v, want a violation", c.dims, c.strides, err)
		}
	}
	cpu, err := New().Open(t.Context(), "1")
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := cpu.Alloc(16)
	if _, err := cpu.(*device).EncodeTensorMap(cb, driver.TensorFloat32, []uint64{4}, nil, []uint32{4}, driver.SwizzleNone, 0); !errors.Is(err, ErrContract) {
		t.Errorf("on the CPU: %v, want a violation", err)
	}
	if n := Violations() - before; n != 3 {
		t.Errorf("%d violations, want 3", n)
	}
	b1.Close()
	if _, err := decodeTensorMap(aligned(m1)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a map of a closed buffer decoded: %v", err)
	}
}

// aligned returns a copy of m in memory aligned to driver.TensorMapAlign.
func aligned(m [driver.TensorMapBytes]byte) []byte {
	mem := make([]byte, 2*driver.TensorMapBytes)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & (driver.TensorMapAlign - 1))
	v := mem[off : off+driver.TensorMapBytes]
	copy(v, m[:])
	return v
}
