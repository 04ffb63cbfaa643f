//go:build !noopencl

package cl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// nameVersionBytes encodes cl_name_version entries as a driver answers them.
func nameVersionBytes(entries ...nameVersion) []byte {
	var b []byte
	for _, e := range entries {
		var rec [nameVersionSize]byte
		binary.NativeEndian.PutUint32(rec[:], e.version)
		copy(rec[4:], e.name)
		b = append(b, rec[:]...)
	}
	return b
}

func clVersion(major, minor uint32) uint32 { return major<<22 | minor<<12 }

// fakeQuery answers the params it holds and fails the others as a driver would.
func fakeQuery(answers map[uint32][]byte) infoQuery {
	return func(param uint32) ([]byte, error) {
		if b, ok := answers[param]; ok {
			return b, nil
		}
		return nil, check(fmt.Sprintf("clGetDeviceInfo(0x%04x)", param), InvalidValue)
	}
}

// TestDescribeLanguage decodes the OpenCL C versions, features and ILs of devices as
// PoCL 3.1 and Rusticl answer them here, and of an OpenCL 1.2 and 2.1 device.
func TestDescribeLanguage(t *testing.T) {
	cases := []struct {
		name, api, lang         string
		answers                 map[uint32][]byte
		versions, features, ils string
		subgroups               bool
	}{
		{"PoCL 3.1", "OpenCL 3.0 PoCL 3.1+debian", "OpenCL C 1.2 PoCL", map[uint32][]byte{
			paramOpenCLCAllVersions: nameVersionBytes(nameVersion{clVersion(1, 0), "OpenCL C"}, nameVersion{clVersion(1, 1), "OpenCL C"},
				nameVersion{clVersion(1, 2), "OpenCL C"}, nameVersion{clVersion(3, 0), "OpenCL C"}),
			paramOpenCLCFeatures: nameVersionBytes(nameVersion{clVersion(3, 0), "__opencl_c_images"}, nameVersion{clVersion(3, 0), "__opencl_c_int64"}),
			paramILVersion:       []byte("\x00"),
		}, "1.0 1.1 1.2 3.0", "__opencl_c_images __opencl_c_int64", "", false},
		{"Rusticl, versions in descending order", "OpenCL 3.0 ", "OpenCL C 1.2 ", map[uint32][]byte{
			paramOpenCLCAllVersions: nameVersionBytes(nameVersion{clVersion(3, 0), "OpenCL C"}, nameVersion{clVersion(1, 2), "OpenCL C"},
				nameVersion{clVersion(1, 1), "OpenCL C"}, nameVersion{clVersion(1, 0), "OpenCL C"}),
			paramOpenCLCFeatures: nameVersionBytes(nameVersion{clVersion(1, 0), "__opencl_c_int64"}),
		}, "1.0 1.1 1.2 3.0", "__opencl_c_int64", "", false},
		{"3.0 GPU with subgroups and SPIR-V, a partial trailing entry", "OpenCL 3.0 NEO", "OpenCL C 1.2", map[uint32][]byte{
			paramOpenCLCAllVersions: append(nameVersionBytes(nameVersion{clVersion(1, 2), "OpenCL C"}, nameVersion{clVersion(3, 0), "OpenCL C"}), 1, 2, 3),
			paramOpenCLCFeatures: nameVersionBytes(nameVersion{clVersion(3, 0), "__opencl_c_subgroups"},
				nameVersion{clVersion(3, 0), "__opencl_c_generic_address_space"}, nameVersion{clVersion(3, 0), "__opencl_c_subgroups"}),
			paramILVersion: []byte("SPIR-V_1.0  SPIR-V_1.2 \x00"),
		}, "1.2 3.0", "__opencl_c_subgroups __opencl_c_generic_address_space", "SPIR-V_1.0 SPIR-V_1.2", true},
		{"1.2 device (NVIDIA)", "OpenCL 3.0 CUDA", "OpenCL C 1.2 ", map[uint32][]byte{}, "1.0 1.1 1.2", "", "", false},
		{"1.2 API", "OpenCL 1.2 pocl", "OpenCL C 1.2 pocl", map[uint32][]byte{paramILVersion: []byte("SPIR-V_1.0")}, "1.0 1.1 1.2", "", "", false},
		{"2.1 device with IL", "OpenCL 2.1 AMD", "OpenCL C 2.0 ", map[uint32][]byte{paramILVersion: []byte("SPIR-V_1.0")}, "1.0 1.1 1.2 2.0", "", "SPIR-V_1.0", false},
		{"nothing reported", "", "", map[uint32][]byte{}, "", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := driver.DeviceInfo{APIVersion: c.api, LanguageVersion: c.lang}
			describeLanguage(fakeQuery(c.answers), &info)
			if info.OpenCLCVersions != c.versions || info.OpenCLCFeatures != c.features || info.ILVersions != c.ils || info.Subgroups != c.subgroups {
				t.Errorf("versions %q, features %q, ILs %q, subgroups %v; want %q, %q, %q, %v",
					info.OpenCLCVersions, info.OpenCLCFeatures, info.ILVersions, info.Subgroups, c.versions, c.features, c.ils, c.subgroups)
			}
		})
	}
}

// TestDeviceLanguage reads the versions of every OpenCL device found: each compiles
// OpenCL C 1.2 at least (the suite's dialect), and says so.
func TestDeviceLanguage(t *testing.T) {
	for _, in := range testDevices(t) {
		t.Run(in.ID, func(t *testing.T) {
			if !in.CompilesOpenCLC("1.2") || in.OpenCLCVersions == "" {
				t.Errorf("%s (%s, %s): OpenCL C versions %q, want 1.2 among them", in.ID, in.Name, in.LanguageVersion, in.OpenCLCVersions)
			}
			t.Logf("%s: OpenCL C %s; features %q; IL %q", in.Name, in.OpenCLCVersions, in.OpenCLCFeatures, in.ILVersions)
		})
	}
}

// runInts builds src with options on dev, runs kernel over n work-items in groups of wg
// with an int buffer of n as its one argument, and returns the buffer.
func runInts(t *testing.T, dev *engine.Device, src, kernel string, n, wg int, options ...string) []int32 {
	t.Helper()
	prog, err := dev.Build(src, options...)
	if err != nil {
		t.Fatalf("build with %q: %v", options, err)
	}
	defer prog.Close()
	k, err := prog.Kernel(kernel)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out, err := engine.NewBuffer[int32](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := q.Launch(k, engine.Range1D(n, wg), out); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, n)
	if err := out.Read(context.Background(), q, 0, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// requireFeature skips the test when the device lacks an OpenCL C feature, naming the
// device and the feature, unless PRISM_REQUIRE names the feature: then it fails.
func requireFeature(t *testing.T, in engine.DeviceInfo, feature string, has bool) {
	t.Helper()
	if has {
		return
	}
	msg := fmt.Sprintf("%s (%s) lacks %s (OpenCL C %s; features %q; IL %q)", in.ID, in.Name, feature, in.OpenCLCVersions, in.OpenCLCFeatures, in.ILVersions)
	if enginetest.Required(feature) {
		t.Fatalf("%s, but PRISM_REQUIRE=%q requires it", msg, os.Getenv("PRISM_REQUIRE"))
	}
	t.Skipf("%s: set PRISM_REQUIRE=%s to make this a failure", msg, feature)
}

// stdFor returns the -cl-std of the newest version among 2.0 and 3.0 that the device
// compiles, and "" for neither.
func stdFor(in engine.DeviceInfo) string {
	for _, v := range []string{"3.0", "2.0"} {
		if strings.Contains(" "+in.OpenCLCVersions+" ", " "+v+" ") {
			return "-cl-std=CL" + v
		}
	}
	return ""
}

// TestStd builds with each -cl-std OpenCL defines on every device: a version the device
// compiles gives __OPENCL_C_VERSION__ of that version (PoCL 3.1 and Rusticl here: CL1.1,
// CL1.2 and CL3.0), one it does not is refused before the build, naming the device and
// the versions it has (CL2.0 here).
func TestStd(t *testing.T) {
	const src = `__kernel void version(__global int* out) { out[get_global_id(0)] = __OPENCL_C_VERSION__; }`
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		in := dev.Info()
		for _, v := range []string{"1.1", "1.2", "2.0", "3.0"} {
			opt := "-cl-std=CL" + v
			if !in.CompilesOpenCLC(v) {
				_, err := dev.Build(src, opt)
				want := fmt.Sprintf("engine: build with %s on %s (%s): the device compiles OpenCL C ", opt, in.ID, in.Name)
				if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(fmt.Sprint(err), want) {
					t.Errorf("%s on a device with OpenCL C %s: %v, want an ErrUnsupported starting %q", opt, in.OpenCLCVersions, err, want)
				}
				continue
			}
			got := runInts(t, dev, src, "version", 4, 4, opt)
			want := int32(100 * (int(v[0]-'0')*10 + int(v[2]-'0')) / 10)
			for i, g := range got {
				if g != want {
					t.Errorf("%s: __OPENCL_C_VERSION__ of item %d = %d, want %d", opt, i, g, want)
				}
			}
		}
	})
}

// TestOpenCLC2Features runs the OpenCL C 2.0/3.0 features Prism's users ask for where the
// device has them, built with -cl-std=CL3.0 (or CL2.0, where they are core): the generic
// address space, program-scope global variables and subgroups. A device without one
// skips its subtest naming the device and the feature (PoCL 3.1 and Rusticl here lack all
// three); PRISM_REQUIRE=<feature> makes that a failure.
func TestOpenCLC2Features(t *testing.T) {
	cases := []struct {
		feature, src, kernel string
		n, wg                int
		want                 func(i int) int32
	}{
		{"__opencl_c_generic_address_space", `
int twice(int* p) { return 2 * *p; } // a generic pointer, given global and local ones
__kernel void generic(__global int* out) {
	__local int l[16];
	int i = get_global_id(0), li = get_local_id(0);
	l[li] = i;
	out[i] = i + 1;
	barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
	out[i] = twice(&out[i]) + twice(&l[li]);
}`, "generic", 32, 16, func(i int) int32 { return int32(2*(i+1) + 2*i) }},
		{"__opencl_c_program_scope_global_variables", `
__global int base = 7;
__global int table[4] = {10, 20, 30, 40};
__kernel void globals(__global int* out) {
	int i = get_global_id(0);
	out[i] = base + table[i % 4];
}`, "globals", 8, 8, func(i int) int32 { return int32(7 + 10*(i%4+1)) }},
		{"__opencl_c_subgroups", `
__kernel void subgroups(__global int* out) {
	int i = get_global_id(0);
	uint size = get_sub_group_size();
	int sum = sub_group_reduce_add(1);
	int scan = sub_group_scan_exclusive_add(1);
	// each item: the subgroup's size equals the reduction, and the exclusive scan is the
	// item's local id in its subgroup
	out[i] = (sum == (int)size && scan == (int)get_sub_group_local_id()) ? 1 : -i - 1;
}`, "subgroups", 64, 64, func(int) int32 { return 1 }},
	}
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		in := dev.Info()
		for _, c := range cases {
			t.Run(c.feature, func(t *testing.T) {
				std := stdFor(in)
				has := std != "" && in.HasOpenCLCFeature(c.feature)
				if std == "-cl-std=CL2.0" { // core in 2.0; subgroups from cl_khr_subgroups
					has = c.feature != "__opencl_c_subgroups" || in.Subgroups
				}
				requireFeature(t, in, c.feature, has)
				got := runInts(t, dev, c.src, c.kernel, c.n, c.wg, std)
				for i, g := range got {
					if w := c.want(i); g != w {
						t.Fatalf("%s: out[%d] = %d, want %d", c.feature, i, g, w)
					}
				}
			})
		}
	})
}

// spirvModule compiles OpenCL C to a SPIR-V module as a project would, with clang-15
// (-cl-std=CL1.2 -target spir64) and llvm-spirv-15, skipping the test where either is
// missing (make deps installs both).
func spirvModule(t *testing.T, src string) []byte {
	t.Helper()
	for _, tool := range []string{"clang-15", "llvm-spirv-15"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs it): %v", tool, err)
		}
	}
	dir := t.TempDir()
	cl, bc, spv := dir+"/k.cl", dir+"/k.bc", dir+"/k.spv"
	if err := os.WriteFile(cl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"clang-15", "-cl-std=CL1.2", "-target", "spir64", "-emit-llvm", "-c", "-o", bc, cl},
		{"llvm-spirv-15", bc, "-o", spv},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b, err := os.ReadFile(spv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const spirvSource = `__kernel void fill(__global int* out) { out[get_global_id(0)] = 3 * (int)get_global_id(0) + 1; }`

// TestSPIRV builds a SPIR-V module compiled from OpenCL C by clang and llvm-spirv on
// every device: one whose CL_DEVICE_IL_VERSION names SPIR-V runs it
// (clCreateProgramWithIL) and must give what the OpenCL C gives; one that takes no IL
// (PoCL 3.1 and Rusticl here) refuses it by name, before the driver is called, and
// PRISM_REQUIRE=spirv makes that a failure. A module handed over as source text (a .spv
// file read as a kernel) is recognized by its magic number.
func TestSPIRV(t *testing.T) {
	module := spirvModule(t, spirvSource)
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		in := dev.Info()
		if !in.TakesSPIRV() {
			for _, src := range []engine.Source{{Dialect: engine.DialectSPIRV, Binary: module}, {Text: string(module), Name: "k.spv"}} {
				_, err := dev.BuildSource(src)
				want := fmt.Sprintf("engine: build SPIR-V on %s (%s): the device takes no intermediate language (CL_DEVICE_IL_VERSION is empty)", in.ID, in.Name)
				if in.ILVersions != "" {
					want = fmt.Sprintf("engine: build SPIR-V on %s (%s): the device takes %s, no SPIR-V", in.ID, in.Name, in.ILVersions)
				}
				if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(fmt.Sprint(err), want) {
					t.Errorf("SPIR-V on %s: %v, want ErrUnsupported containing %q", in.ID, err, want)
				}
			}
			if slices.Contains(dev.Dialects(), engine.DialectSPIRV) {
				t.Errorf("%s lists SPIR-V among its dialects %v, with IL %q", in.ID, dev.Dialects(), in.ILVersions)
			}
			requireFeature(t, in, "spirv", false)
		}
		for _, src := range []engine.Source{{Dialect: engine.DialectSPIRV, Binary: module}, {Text: string(module), Name: "k.spv"}} {
			prog, err := dev.BuildSource(src)
			if err != nil {
				t.Fatalf("build of the SPIR-V module on %s (IL %s): %v", in.ID, in.ILVersions, err)
			}
			k, err := prog.Kernel("fill")
			if err != nil {
				t.Fatal(err)
			}
			q, err := dev.NewQueue()
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.NewBuffer[int32](dev, 16)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Launch(k, engine.Range1D(16, 16), out); err != nil {
				t.Fatal(err)
			}
			got := make([]int32, 16)
			if err := out.Read(context.Background(), q, 0, got); err != nil {
				t.Fatal(err)
			}
			for i, g := range got {
				if g != int32(3*i+1) {
					t.Fatalf("out[%d] = %d, want %d", i, g, 3*i+1)
				}
			}
			out.Close()
			q.Close()
			k.Close()
			prog.Close()
		}
	})
}

// TestCreateProgramWithIL calls clCreateProgramWithIL itself on every device, past the
// refusal of devices without IL, so that the call is made wherever the tests run: the
// library here (ocl-icd 2.3) has it; a device that takes SPIR-V makes a program, one that
// does not answers a status, which must be an error the loader or driver names.
func TestCreateProgramWithIL(t *testing.T) {
	module := spirvModule(t, spirvSource)
	if !haveProgramWithIL() {
		t.Skip("the OpenCL library has no clCreateProgramWithIL (older than OpenCL 2.1)")
	}
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		d := dev.Driver().(*device)
		var (
			p  *ocl.Program
			st Status
		)
		if err := d.c.thread.Call(func() error {
			p, st = createProgramWithIL(rawContext(d.c.ctx), module)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		in := dev.Info()
		if st == Success {
			release(d.c.thread, p.Release)
			if !in.TakesSPIRV() {
				t.Logf("%s (IL %q) made a program of SPIR-V though it reports no IL", in.ID, in.ILVersions)
			}
			return
		}
		if in.TakesSPIRV() {
			t.Errorf("%s takes %s, yet clCreateProgramWithIL answered %v", in.ID, in.ILVersions, st)
		}
		t.Logf("%s (IL %q): clCreateProgramWithIL answered %v", in.ID, in.ILVersions, st)
	})
}
