package histogram

// HistogramUint32Ref returns the histogram of x into bins bins of width width, computed on
// the host as histogram.cl does: bin = min(v / width, bins-1). Counts are compared exactly.
func HistogramUint32Ref(x []uint32, bins int, width uint32) []uint32 {
	out := make([]uint32, bins)
	for _, v := range x {
		out[min(v/width, uint32(bins-1))]++
	}
	return out
}

// HistogramFloat32Ref returns the histogram of x into bins equal bins over [lo, hi), computed
// on the host with the device's float32 arithmetic: values outside [lo, hi) and NaNs are
// dropped; v in range goes to bin min(uint32((v - lo) * scale), bins-1), scale =
// HistogramScale(bins, lo, hi). Both float32 operations are correctly rounded on the device
// (OpenCL requires it of + - *; there is no division and nothing to contract into an fma), so
// the counts are compared exactly: no tolerance.
func HistogramFloat32Ref(x []float32, bins int, lo, hi float32) []uint32 {
	out := make([]uint32, bins)
	scale := HistogramScale(bins, lo, hi)
	for _, v := range x {
		if !(v >= lo && v < hi) {
			continue
		}
		d := v - lo
		b := uint32(d * scale)
		out[min(b, uint32(bins-1))]++
	}
	return out
}
