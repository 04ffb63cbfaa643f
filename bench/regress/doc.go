// Package regress decides from benchmark samples whether a series got slower or faster,
// and finds the steps in a series' history.
//
// A series is one case (op, variant, size) on one device fingerprint (store.Fingerprint):
// results of unlike devices are never compared. Decide calls a change between a baseline
// run and a new run of a series by two tests that must both agree:
//
//  1. The Mann-Whitney U test (bench.MannWhitney, benchstat's) over the two runs' per-run
//     samples finds them different at level Alpha (default 0.05): p <= Alpha. The samples
//     of one run share that run's conditions (the load of the machine, the clock, where the
//     buffers landed), so the test alone flags differences between runs of one build far
//     more often than Alpha; hence
//  2. the medians differ by more than the series' noise threshold: |new/old - 1| >
//     Threshold. The threshold is learnt from the store's history of the series
//     (LearnNoise): among the runs of one build (one commit; runs of a binary without
//     version control information count as one build) of the same fingerprint,
//     the spread of the log of the run medians around their build's median, as a robust
//     standard deviation (1.4826 x the median absolute deviation, corrected for the
//     build's own median), Sigma; Threshold = max(MinThreshold, K x Sigma), with K = 4 by
//     default and MinThreshold 1%. With fewer than MinHistory such runs (6) it is
//     DefaultThreshold, 5% (bench.DefaultThreshold, prism compare's). A fixed threshold
//     (Options.Threshold, prism check --threshold) replaces the learnt one.
//
// A change both tests agree on is a regression (slower) or an improvement (faster);
// anything else is no change, with a note where the samples were too few for the U test
// to ever reach Alpha (4 a side at 0.05).
//
// Detect finds steps in a series' history, as asv does for its published graphs: a
// piecewise-constant fit of the log of the run medians by binary segmentation with an L1
// cost (sum of absolute deviations from each segment's median, robust to single
// outliers), where a split is kept when it lowers the cost by more than Penalty (20)
// times the series' noise (the robust spread of successive differences, at least 0.1%),
// and where no single split is kept, a pair of cuts when it saves more than twice that (a
// level that changes and comes back, which one split cannot see); segments hold at least MinSegment runs (2), and adjacent levels closer than MinChange
// (1%) are merged. Each step names the run where the new level starts, the
// levels before and after (medians of the segments) and their ratio.
//
// The package is pure Go over plain values: the CLI and the published site read the
// series from the store and pass them in.
package regress
