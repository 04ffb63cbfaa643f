// Package histogram holds the histogram family of Prism's kernel suite: histograms of
// uint32 and float32 data into uint32 counts, through work-group sub-histograms in local
// memory (histogram.cl).
//
// NewHistogram compiles the family's portable kernels (one 4-byte input per item and step,
// 8 work-groups per compute unit); NewPrivatized its privatized kernels, the ops' first
// variant ("privatized"), written for the memory system of NVIDIA GPUs and run by every
// device: a grid of 4 work-groups per compute unit in a grid-stride loop of 16-byte loads, 4
// in flight per item, counted with local atomics into 32 lane-striped sub-histograms per
// group (bin b of copy c at word 32b + c, c the item's lane: the lanes of a warp never share
// a bank or a word), merged per group and added to the counts with one global atomic per
// bin. Both give the same counts; histograms with more bins than LocalBins use global
// atomics in both. HistogramUint32Ref and HistogramFloat32Ref are the references (counts are
// compared exactly); Family lists the ops the suite runs.
package histogram
