//go:build !noopencl

package cl

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine/driver"
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
