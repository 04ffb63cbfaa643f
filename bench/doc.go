// Package bench is Prism's benchmark harness: it runs the operations of the kernel catalog
// (kernels.Op) at one or more sizes on one or more devices, verifies every result against
// its float64 reference before timing it, times with device events after warm-up, and
// reports time, GB/s and GFLOP/s beside the ceilings measured on the same device in the same
// run: device-copy bandwidth and the FMA-bound peak in float32 and float64. Each result
// carries its roofline: attainable = min(peak of its type, copy GB/s x FLOPs/byte), the
// fraction achieved and which bound (memory or compute) applies.
//
// Run returns a Report, which writes and reads as JSON (WriteJSON, ReadReport; schema in
// docs/bench.schema.json, fields in docs/BENCH.md). Compare matches two reports case by case
// and decides faster, slower or the same with benchstat's Mann-Whitney U test over the
// per-run samples; Gate turns the comparison into a CI verdict. NVML telemetry is sampled
// while each NVIDIA GPU runs. Rendering for people (terminal table, Markdown, CSV, benchstat
// input, charts, HTML) lives apart, in bench/render: this package measures and decides, and
// draws nothing.
//
// The harness is not safe for concurrent use: run one Run at a time per device.
//
// docs/ARCHITECTURE.md places the harness in the layers and describes variants, vendor
// baselines and the GPU loop that produces the published figures.
package bench
