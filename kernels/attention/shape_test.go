package attention

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestParseShape reads shapes written BxHxSxD, in any case and with spaces around, and
// refuses the others with ErrInvalidArg and a message in the user's terms: three or five
// numbers, zero and negative dimensions, suffixes, a dimension past 2^31-1, empty.
func TestParseShape(t *testing.T) {
	for in, want := range map[string]Shape{
		"4x32x4096x128": {4, 32, 4096, 128},
		" 1X1X1X1 ":     {1, 1, 1, 1},
		"2x3x17x80":     {2, 3, 17, 80},
	} {
		got, err := ParseShape(in)
		if err != nil || got != want {
			t.Errorf("ParseShape(%q) = %v, %v; want %v", in, got, err, want)
		}
		if again, _ := ParseShape(got.String()); again != got {
			t.Errorf("%v spelled %q reads back as %v", got, got.String(), again)
		}
	}
	for in, want := range map[string]string{
		"4096x4096x4096":    "3 numbers; an attention shape is four, batch x heads x seq x dim written BxHxSxD",
		"1x2x3x4x5":         "5 numbers; an attention shape is four",
		"0x32x4096x128":     "batch is 0; every dimension is at least 1",
		"4x32x0x128":        "seq is 0; every dimension is at least 1",
		"4x-2x4096x128":     "heads is -2",
		"4x32x4Kx128":       `seq "4k" is not a whole number of decimal digits`,
		"4x32x4096x":        `dim "" is not a whole number`,
		"1x1x1x99999999999": "dim 99999999999 is above 2^31-1",
		"":                  "empty; write batch x heads x seq x dim",
	} {
		_, err := ParseShape(in)
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseShape(%q) = %v; want ErrInvalidArg naming the shape with %q", in, err, want)
		}
	}
}

// TestCheckShape checks the shapes every attention op takes (dims 1 to 256, the
// int32 range of a tensor) and the figures the harness reads: ShapeSize (elements of one
// tensor), ShapeElements (four tensors), and SizeShape, the shape of a size, which is
// SizeDoc's rule and gives each op's default shape back from its size.
func TestCheckShape(t *testing.T) {
	for _, op := range Family().Ops {
		for _, text := range []string{"1x1x1x1", "4x32x4096x256", "1x1x1x64", "2x3x17x80"} {
			s, err := CheckShape(op.Name, text)
			if err != nil || s.String() != text {
				t.Errorf("%s: CheckShape(%s) = %v, %v", op.Name, text, s, err)
			}
		}
		for text, want := range map[string]string{
			"4x32x4096x300":  "dim 300 is above 256, the largest head dimension its kernels take",
			"64x64x8192x64":  "2147483648 elements a tensor, above 2^31-1", // 2^31 exactly
			"4096x4096x4096": "3 numbers",
		} {
			_, err := CheckShape(op.Name, text)
			if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: CheckShape(%s) = %v; want ErrInvalidArg with %q", op.Name, text, err, want)
			}
		}
		if s, _ := ParseShape("4x32x4096x128"); ShapeSize(op.Name, s) != 4*32*4096*128 || ShapeElements(op.Name, s) != 4*4*32*4096*128 {
			t.Errorf("%s: ShapeSize %d, ShapeElements %g", op.Name, ShapeSize(op.Name, s), ShapeElements(op.Name, s))
		}
		// The default size's shape reads back from its size.
		def := SizeShape(op.Name, op.DefaultSize)
		if ShapeSize(op.Name, def) != op.DefaultSize || SizeShape(op.Name, ShapeSize(op.Name, def)) != def {
			t.Errorf("%s: default size %d gives %v of size %d", op.Name, op.DefaultSize, def, ShapeSize(op.Name, def))
		}
	}
	if _, err := CheckShape("gemm/nn/float32", "1x1x1x64"); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "not an op of the attention family") {
		t.Errorf("a gemm op: %v", err)
	}
	if _, err := CheckShape("attention/full/float32", "4x32x4096x300"); err == nil || !strings.Contains(err.Error(), "flash-simt and the portable kernel take any dim from 1 to 256") {
		t.Errorf("float32 at dim 300: %v; want the dims of its variants", err)
	}
	if _, err := CheckShape("attention/causal/bfloat16", "4x32x4096x300"); err == nil || !strings.Contains(err.Error(), "cuda-mma 64 and 128, cuda-wgmma 64, 128 and 256") {
		t.Errorf("bfloat16 at dim 300: %v; want the dims of its variants", err)
	}
	for _, c := range []struct {
		op   string
		size int
		want Shape
	}{
		{"attention/full/float32", 2097152, Shape{1, 8, 4096, 64}},
		{"attention/full/float32", 1, Shape{1, 8, 1, 64}},
		{"attention/causal/float32", 512 * 7, Shape{1, 8, 7, 64}},
		{"attention/full/bfloat16", 4 * 32 * 4096 * 128, Shape{4, 32, 4096, 128}},
		{"attention/causal/float16", 4 * 32 * 128, Shape{4, 32, 1, 128}},
		{"attention/full/float16", 4*32*128 - 1, Shape{1, 32, 1, 128}},
		{"attention/full/bfloat16", 3 * 128, Shape{1, 3, 1, 128}},
		{"attention/full/bfloat16", 1, Shape{1, 1, 1, 128}},
	} {
		if got := SizeShape(c.op, c.size); got != c.want {
			t.Errorf("SizeShape(%s, %d) = %v; want %v", c.op, c.size, got, c.want)
		}
	}
}

// shapeCases are the shapes TestOpsAtShapes runs: head dims 1, 64, 80 (not a power of
// two, the 128-wide tiles) and 256, seq 1, batch and heads above 1, seq around the
// portable kernel's and flash-simt's blocks (16 to 64).
var shapeCases = []string{"1x1x1x1", "2x3x1x64", "1x2x33x80", "2x1x17x256", "1x1x65x64", "1x2x9x1"}

// TestOpsAtShapes sets up every attention op in every variant that fits the device at
// explicit shapes (Params.Shape, with no Size), runs it and verifies it against the float64
// reference (the op's own Verify: every row at these shapes), with the shape set up
// reported as the op's sizes report theirs; a corrupted output fails Verify at each
// shape. A shape an op's size gives sets up what that size does (the same Shape()
// string, by which results pair). Bad shapes are refused at Setup, before any work, by
// every variant, with ErrInvalidArg naming the op.
func TestOpsAtShapes(t *testing.T) {
	shapes := shapeCases
	if kerneltest.Small() { // Oclgrind: a few work-groups per case
		shapes = []string{"1x1x1x1", "1x2x9x80", "1x1x3x256"}
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		ran := 0
		for _, op := range Family().Ops {
			for _, v := range op.Variants {
				if v.Fits(dev) != nil {
					continue
				}
				t.Run(op.Name+"/"+v.Name, func(t *testing.T) {
					shapes := shapes
					if kerneltest.Small() && strings.HasPrefix(op.Name, "attention/causal/") {
						// Oclgrind: the mask is a kernel argument of the builds the full op runs
						// at every shape (dims 80 and 256 took about 5 s more here for the four
						// causal variants); TestAttention and TestFlash run it causal across
						// several blocks in every type.
						shapes = shapes[:1]
					}
					for _, text := range shapes {
						s, _ := ParseShape(text)
						in, err := v.Setup(t.Context(), q, kernels.Params{Shape: text, Seed: 5, Variant: v.Name})
						if err != nil && errors.Is(err, engine.ErrUnsupported) && !takesDim(v.Name, s.Dim) {
							// The tensor-core variants take some head dims only, and say so.
							if !strings.Contains(err.Error(), fmt.Sprintf("not %d", s.Dim)) {
								t.Errorf("%s: refused without naming head dim %d: %v", text, s.Dim, err)
							}
							continue
						}
						if err != nil {
							t.Fatalf("%s: %v", text, err)
						}
						want := s.tensors().String()
						if strings.HasPrefix(op.Name, "attention/causal/") {
							want += " causal"
						}
						if got := in.Shape(); got != want {
							t.Errorf("%s: Shape() = %q; want %q", text, got, want)
						}
						if err := in.Run(t.Context(), q); err != nil {
							in.Close()
							t.Fatalf("%s: %v", text, err)
						}
						if err := in.Verify(t.Context(), q); err != nil {
							t.Errorf("%s: %v", text, err)
						}
						corruptOutput(t, q, in)
						if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) {
							t.Errorf("%s: a corrupted output verifies: %v", text, err)
						}
						in.Close()
						ran++
					}
					// The shape of a size is that size's case.
					size := op.QuickSize
					def := SizeShape(op.Name, size)
					a, err := v.Setup(t.Context(), q, kernels.Params{Size: size, Seed: 5, Variant: v.Name})
					if err != nil {
						t.Fatal(err)
					}
					defer a.Close()
					b, err := v.Setup(t.Context(), q, kernels.Params{Shape: def.String(), Size: 12345, Seed: 5, Variant: v.Name})
					if err != nil {
						t.Fatal(err)
					}
					defer b.Close()
					if a.Shape() != b.Shape() || a.Model() != b.Model() {
						t.Errorf("size %d: %s, %+v; its shape %s: %s, %+v", size, a.Shape(), a.Model(), def, b.Shape(), b.Model())
					}
					for text, want := range map[string]string{
						"1x2x3":          "3 numbers; an attention shape is four",
						"0x1x1x64":       "batch is 0",
						"1x1x1x300":      "dim 300 is above 256",
						"4096x4096x4096": "written BxHxSxD",
					} {
						in, err := v.Setup(t.Context(), q, kernels.Params{Shape: text, Variant: v.Name})
						if err == nil {
							in.Close()
						}
						if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), op.Name) {
							t.Errorf("shape %s: %v; want ErrInvalidArg naming %s with %q", text, err, op.Name, want)
						}
					}
				})
			}
		}
		want := len(Family().Ops) * len(shapes)
		if kerneltest.Small() { // the causal ops at their first shape only
			want = len(Family().Ops) / 2 * (len(shapes) + 1)
		}
		if ran < want {
			t.Errorf("%d cases ran; want %d: every op at every shape", ran, want)
		}
	})
}

// corruptOutput moves the first element of the instance's output far off.
func corruptOutput(t *testing.T, q *engine.Queue, in kernels.Instance) {
	t.Helper()
	switch a := in.(type) {
	case *attnInstance[float32]:
		corrupt(t, q, a.out)
	case *attnInstance[engine.Half]:
		corrupt(t, q, a.out)
	case *attnInstance[engine.BFloat16]:
		corrupt(t, q, a.out)
	case *attnInstance[engine.Float8E4M3]:
		corrupt(t, q, a.out)
	default:
		t.Fatalf("instance %T", in)
	}
}

func corrupt[S Elem](t *testing.T, q *engine.Queue, b *engine.Buffer[S]) {
	t.Helper()
	got, err := b.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 1)
	widen(x, got[:1])
	if err := b.Write(t.Context(), q, 0, []S{roundTo[S](x[0] + 100)}); err != nil {
		t.Fatal(err)
	}
}

// takesDim reports whether variant takes head dim d: the tensor-core variants take some
// dims only (mma 64 and 128, wgmma those and 256, in every type it takes), the others any
// up to AttentionMaxDim.
func takesDim(variant string, d int) bool {
	switch variant {
	case "cuda-mma":
		return d == 64 || d == 128
	case "cuda-wgmma":
		return d == 64 || d == 128 || d == 256
	}
	return true
}
