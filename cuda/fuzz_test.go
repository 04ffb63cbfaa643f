package cuda

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzCacheEntry feeds any bytes to the module cache's entry reader, as a corrupt or
// foreign file in the cache directory would be: it must never panic, must accept only what
// cacheEntry wrote (kind and image back unchanged), and every entry it writes must read back.
func FuzzCacheEntry(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte(cacheMagic))
	f.Add(cacheEntry(kindPTX, []byte(".version 8.8\n.target sm_90\x00")))
	f.Add(cacheEntry(kindCUBIN, []byte("\x7fELF")))
	f.Add(append(cacheEntry(kindPTX, []byte("x")), 'y'))
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, image, err := parseCacheEntry(b)
		if err == nil && !bytes.Equal(cacheEntry(kind, image), b) {
			t.Fatalf("parseCacheEntry accepted %d bytes that cacheEntry would not write", len(b))
		}
		for _, k := range []byte{kindCUBIN, kindPTX} {
			k2, img2, err := parseCacheEntry(cacheEntry(k, b))
			if err != nil || k2 != k || !bytes.Equal(img2, b) {
				t.Fatalf("an entry of kind %d and %d bytes does not read back: %v", k, len(b), err)
			}
		}
	})
}

// FuzzOptions feeds build options to the OpenCL-to-NVRTC translation and the CUDA C++
// checks: they must never panic, and every option they return is one word, non-empty, with
// no -arch (the backend chooses the architecture).
func FuzzOptions(f *testing.F) {
	for _, s := range []string{"", "-DWG=256", "-DWG=256 -DT=float", "-cl-fast-relaxed-math", "-cl-std=CL1.2", "-cl-nope", "-D X=1", "-I /tmp", "-arch=sm_90", "--gpu-architecture sm_80", "-U", "-D", "  ", "-DELEM=unsigned int", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tr := range []func([]string) ([]string, error){translateOptions, cudaOptions} {
			out, err := tr([]string{s})
			if err != nil {
				continue
			}
			for _, o := range out {
				if o == "" || strings.ContainsAny(o, " \t\n") && !strings.HasPrefix(o, "-D") && !strings.HasPrefix(o, "-I") && !strings.HasPrefix(o, "-U") {
					t.Errorf("options %q give %q: an empty option or several words in one", s, o)
				}
				if strings.HasPrefix(o, "-arch") || strings.HasPrefix(o, "--gpu-architecture") {
					t.Errorf("options %q pass an architecture option %q through", s, o)
				}
			}
		}
	})
}
