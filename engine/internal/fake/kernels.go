package fake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// param describes one kernel parameter: a buffer, a __local pointer, or a scalar of that
// many bytes.
type param int

const (
	bufferParam param = 0
	localParam  param = -1
)

// impl is the Go implementation of a kernel.
type impl struct {
	dialect    driver.Dialect // the dialect of the source that declares it
	params     []param
	localBytes int64  // static local memory, as a compiler would report it
	required   [3]int // the work-group size the source requires, zero for none
	// bind decodes the arguments (checked against params) once per launch of range r and
	// returns the function that runs one work-item, given its global IDs.
	bind func(a args, defines map[string]string, r driver.Range) (func(gid [3]int), error)
}

// kernels are the Go implementations the fake knows, by kernel name: those of the
// conformance suite, with the semantics documented in package suitekernels.
var kernels = map[string]*impl{
	suitekernels.Axpy: {
		params: []param{4, 4, 4, bufferParam, bufferParam},
		bind: func(a args, _ map[string]string, _ driver.Range) (func([3]int), error) {
			n, off, alpha, x, y := int(a.int32(0)), int(a.int32(1)), a.float32(2), view[float32](a, 3), view[float32](a, 4)
			return func(g [3]int) {
				if i := g[0]; i < n {
					// The explicit conversion keeps Go from fusing into an FMA.
					y[off+i] = float32(alpha*x[i]) + y[off+i]
				}
			}, nil
		},
	},
	suitekernels.Iota: {
		params: []param{4, 4, bufferParam},
		bind: func(a args, _ map[string]string, _ driver.Range) (func([3]int), error) {
			n, off, out := int(a.int32(0)), int(a.int32(1)), view[uint32](a, 2)
			return func(g [3]int) {
				if i := g[0]; i < n {
					out[off+i] = uint32(i)
				}
			}, nil
		},
	},
	suitekernels.Index2D: {
		params: []param{4, 4, 4, bufferParam},
		bind: func(a args, _ map[string]string, _ driver.Range) (func([3]int), error) {
			w, h, off, out := int(a.int32(0)), int(a.int32(1)), int(a.int32(2)), view[uint32](a, 3)
			return func(g [3]int) {
				if x, y := g[0], g[1]; x < w && y < h {
					out[off+y*w+x] = uint32(y)<<16 | uint32(x)
				}
			}, nil
		},
	},
	suitekernels.Index3D: {
		params: []param{4, 4, 4, 4, bufferParam},
		bind: func(a args, _ map[string]string, _ driver.Range) (func([3]int), error) {
			w, h, d, off, out := int(a.int32(0)), int(a.int32(1)), int(a.int32(2)), int(a.int32(3)), view[uint32](a, 4)
			return func(g [3]int) {
				if x, y, z := g[0], g[1], g[2]; x < w && y < h && z < d {
					out[off+(z*h+y)*w+x] = uint32(z)<<20 | uint32(y)<<10 | uint32(x)
				}
			}, nil
		},
	},
	suitekernels.Define: {
		params: []param{bufferParam},
		bind: func(a args, defines map[string]string, _ driver.Range) (func([3]int), error) {
			v := int32(suitekernels.DefineDefault)
			if s, ok := defines[suitekernels.DefineMacro]; ok {
				n, err := strconv.ParseInt(s, 0, 32)
				if err != nil {
					return nil, fmt.Errorf("fake: %s=%q is not an int", suitekernels.DefineMacro, s)
				}
				v = int32(n)
			}
			out := view[int32](a, 0)
			return func(g [3]int) {
				if g[0] == 0 {
					out[0] = v
				}
			}, nil
		},
	},
	suitekernels.Count: {
		params: []param{4, 4, 4, 4, bufferParam, bufferParam},
		bind:   countItems,
	},
	suitekernels.CountFixed: {
		params:   []param{4, 4, 4, 4, bufferParam, bufferParam},
		required: suitekernels.FixedLocal,
		bind: func(a args, defines map[string]string, r driver.Range) (func([3]int), error) {
			if r.Local != suitekernels.FixedLocal {
				return nil, fmt.Errorf("fake: local size %v, the kernel requires %v (INVALID_WORK_GROUP_SIZE)", r.Local, suitekernels.FixedLocal)
			}
			return countItems(a, defines, r)
		},
	},
	suitekernels.GroupReverse: {
		params:     []param{4, 4, bufferParam, bufferParam},
		localBytes: suitekernels.GroupMax * 4,
		bind: func(a args, _ map[string]string, r driver.Range) (func([3]int), error) {
			if r.Local[0] > suitekernels.GroupMax {
				return nil, fmt.Errorf("fake: work-groups of %d items overflow the kernel's local array of %d", r.Local[0], suitekernels.GroupMax)
			}
			return groupReverse(a, r.Local[0]), nil
		},
	},
	suitekernels.GroupReverseLocal: {
		params: []param{4, 4, bufferParam, bufferParam, localParam},
		bind: func(a args, _ map[string]string, r driver.Range) (func([3]int), error) {
			if need := int64(r.Local[0]) * 4; a[4].Local < need {
				return nil, fmt.Errorf("fake: %d bytes of local memory for work-groups of %d uints", a[4].Local, r.Local[0])
			}
			return groupReverse(a, r.Local[0]), nil
		},
	},
	suitekernels.GroupReverseShared: {
		dialect: driver.DialectCUDA,
		params:  []param{4, 4, bufferParam, bufferParam},
		bind: func(a args, _ map[string]string, r driver.Range) (func([3]int), error) {
			if need := int64(r.Local[0]) * 4; r.SharedBytes < need {
				return nil, fmt.Errorf("fake: %d bytes of dynamic shared memory for blocks of %d uints", r.SharedBytes, r.Local[0])
			}
			reverse := groupReverse(a, r.Local[0])
			n, off, out := int(a.int32(0)), int(a.int32(1)), view[uint32](a, 3)
			return func(g [3]int) {
				reverse(g)
				if g[0] == 0 {
					out[off+n] = suitekernels.HalfCheck
				}
			}, nil
		},
	},
	suitekernels.ClusterRank: {
		dialect: driver.DialectCUDA,
		params:  []param{bufferParam},
		bind: func(a args, _ map[string]string, r driver.Range) (func([3]int), error) {
			if !r.Clustered() {
				return nil, errors.New("fake: a cluster kernel launched without clusters")
			}
			out := view[uint32](a, 0)
			var groups, cluster [3]int
			size := 1
			for i := range 3 {
				groups[i], cluster[i] = 1, max(r.Cluster[i], 1)
				if i < r.Dims {
					groups[i] = r.Global[i] / r.Local[i]
				}
				size *= cluster[i]
			}
			return func(g [3]int) {
				var b, l [3]int // block index and local index
				for i := range 3 {
					if i < r.Dims {
						b[i], l[i] = g[i]/r.Local[i], g[i]%r.Local[i]
					}
				}
				if l != [3]int{} {
					return
				}
				rank := b[0]%cluster[0] + cluster[0]*(b[1]%cluster[1]+cluster[1]*(b[2]%cluster[2]))
				out[b[0]+groups[0]*(b[1]+groups[1]*b[2])] = uint32(size)<<16 | uint32(rank)
			}, nil
		},
	},
	suitekernels.TMABox: {
		dialect:    driver.DialectCUDA,
		params:     []param{driver.TensorMapBytes, 4, 4, 4, bufferParam},
		localBytes: suitekernels.TMABoxW*suitekernels.TMABoxH*4 + 8, // the tile and the mbarrier
		bind:       tmaBox,
	},
}

// tmaBox binds TMABox: each work-item copies the elements of the box whose index is its
// local ID modulo the work-group size, reading the tensor as TMA would (zero outside it).
func tmaBox(a args, _ map[string]string, r driver.Range) (func([3]int), error) {
	tm, err := decodeTensorMap(a[0].Value)
	if err != nil {
		return nil, err
	}
	const w, h = suitekernels.TMABoxW, suitekernels.TMABoxH
	if tm.dt != driver.TensorFloat32 || len(tm.dims) != 2 || tm.box[0] != w || tm.box[1] != h || tm.swizzle != driver.SwizzleNone {
		return nil, fmt.Errorf("fake: %s takes a 2D float32 tensor map with a %dx%d box and no swizzle, not %v %v box %v swizzle %v",
			suitekernels.TMABox, w, h, tm.dt, tm.dims, tm.box, tm.swizzle)
	}
	x0, y0, off, out := int64(a.int32(1)), int64(a.int32(2)), int(a.int32(3)), view[float32](a, 4)
	src, dims, stride := tm.buf.mem, tm.dims, int64(tm.strides[0])
	l := r.Local[0]
	return func(g [3]int) {
		for i := g[0] % l; i < w*h; i += l {
			x, y := x0+int64(i%w), y0+int64(i/w)
			var v float32
			if x >= 0 && x < int64(dims[0]) && y >= 0 && y < int64(dims[1]) {
				v = math.Float32frombits(binary.LittleEndian.Uint32(src[y*stride+4*x:]))
			}
			out[off+i] = v
		}
	}, nil
}

// groupReverse runs one work-item of the group-reverse kernels for work-groups of s items:
// out[off+i] = in[j], j the mirror of i in its work-group, 0 past n.
func groupReverse(a args, s int) func(g [3]int) {
	n, off, in, out := int(a.int32(0)), int(a.int32(1)), view[uint32](a, 2), view[uint32](a, 3)
	return func(g [3]int) {
		i := g[0]
		if i >= n {
			return
		}
		base := i / s * s
		if j := base + s - 1 - (i - base); j < n {
			out[off+i] = in[j]
		} else {
			out[off+i] = 0
		}
	}
}

// args are a launch's arguments, already checked against the kernel's params.
type args []driver.Arg

func (a args) int32(i int) int32 { return int32(binary.LittleEndian.Uint32(a[i].Value)) }

func (a args) float32(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(a[i].Value))
}

// view returns buffer argument i as a slice of T (the buffer's memory is 8-byte aligned).
func view[T any](a args, i int) []T {
	b := asBuffer(a[i].Buffer)
	var z T
	n := len(b.mem) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.mem))), n)
}

// countItems binds kernel Count (and CountFixed): every work-item counts itself.
func countItems(a args, _ map[string]string, r driver.Range) (func([3]int), error) {
	w, h, d, off := int(a.int32(0)), int(a.int32(1)), int(a.int32(2)), int(a.int32(3))
	counts, sizes := view[uint32](a, 4), view[uint32](a, 5)
	return func(g [3]int) {
		cell := w * h * d
		if x, y, z := g[0], g[1], g[2]; x < w && y < h && z < d {
			cell = (z*h+y)*w + x
		}
		counts[off+cell]++ // work-items run one at a time
		if g == [3]int{} {
			for i := range 3 {
				sizes[off+i], sizes[off+3+i] = 1, 1 // as OpenCL reports an unused dimension
				if i < r.Dims {
					sizes[off+i], sizes[off+3+i] = uint32(r.Global[i]), uint32(r.Local[i])
				}
			}
		}
	}, nil
}
