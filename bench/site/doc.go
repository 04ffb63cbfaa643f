// Package site writes the results store as a static web site, in the manner of asv's
// published results: Publish reads every run of a bench/store.Store and writes
//
//   - index.html: devices side by side per op. One row per case, one column per device
//     fingerprint (bench/store.Fingerprint: like hardware and software), each cell the
//     latest run of the case on that device: its best variant (the fastest at the largest
//     size it ran), the rate, the vendor library's time over Prism's where a vendor
//     baseline was run (above 1: Prism is faster), and the verdict (bench.Result.Verdict);
//     the cell links to the case's page. Above it, the series whose latest step is a
//     slowdown.
//   - cases/NAME.html: one page per case, its history over the runs and commits per size and
//     device: an inline SVG chart (the median at each run, a bar from min to max, a marker
//     where each step starts) and a table per series (device fingerprint, variant, size)
//     with each run's change and the steps marked (see below).
//   - runs.html and runs/ID.html: the runs, newest first, and one page per run: when,
//     where, the command, the commit, the devices with every field of their fingerprint
//     and their ceilings, and every result with its verdict.
//   - style.css: the one style sheet.
//
// The site needs no server and no network: no script, font or image is loaded from
// anywhere, the charts are SVG inside the pages, and every link is relative, so that the
// directory may be copied anywhere or served as it is (prism serve). The same store gives
// the same bytes: nothing of the moment of publishing is written.
//
// The regressions marked are the steps of each series that bench/regress's detector finds
// (regress.Detect, as asv marks its graphs): a piecewise-constant fit of the log of the run
// medians, whose levels hold two runs or more, so that one odd run is no step and a
// lasting change is marked once, at the run where the new level starts.
//
// Publish writes the site into a temporary directory beside the destination and then
// puts it in place whole (an atomic exchange of the two directories where the system has
// one, Linux's renameat2; else two renames): a reader sees the old site or the new one,
// never a part, and a failed publish leaves the old one as it was. It replaces only a
// directory that is empty or holds a site it wrote.
//
// Publish reads the store and never writes it; publishes of one store may run at once
// into different directories.
package site
