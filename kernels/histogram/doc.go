// Package histogram holds the histogram family of Prism's kernel suite: histograms of
// uint32 and float32 data into uint32 counts, through work-group sub-histograms in local
// memory (histogram.cl).
//
// NewHistogram compiles the family for a device; HistogramUint32Ref and
// HistogramFloat32Ref are the references (counts are compared exactly); Family lists the
// ops the suite runs.
package histogram
