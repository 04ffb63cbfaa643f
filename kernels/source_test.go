package kernels

import "testing"

func TestHeader(t *testing.T) {
	const src = `// demo.cl: a family.
//
// Purpose: shows the header.
// Tunables (-D):
//   WG   work-group size   default 256
//   VEC  vector width      default 4
// Variants: one.
//   and a second line
// Launch: 1D.

__kernel void demo(__global float *x) {}
`
	if h := Header(src); h != "demo.cl: a family.\n\nPurpose: shows the header.\nTunables (-D):\n  WG   work-group size   default 256\n  VEC  vector width      default 4\nVariants: one.\n  and a second line\nLaunch: 1D.\n" {
		t.Errorf("Header = %q", h)
	}
	if s := HeaderSection(src, "Tunables"); s != "Tunables (-D):\n  WG   work-group size   default 256\n  VEC  vector width      default 4" {
		t.Errorf("HeaderSection(Tunables) = %q", s)
	}
	if s := HeaderSection(src, "Variants"); s != "Variants: one.\n  and a second line" {
		t.Errorf("HeaderSection(Variants) = %q", s)
	}
	if s := HeaderSection(src, "Arguments"); s != "" {
		t.Errorf("HeaderSection(Arguments) = %q, want empty", s)
	}
	if h := Header("__kernel void k() {}"); h != "" {
		t.Errorf("Header of a source without a header = %q", h)
	}
}
