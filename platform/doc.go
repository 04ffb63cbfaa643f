// Package platform discovers the devices of every registered backend and chooses among them.
//
// Discover returns one flat list with stable IDs ("opencl:1:0", "cuda:0"), and the state of
// each registered backend. One physical card seen through two APIs (CUDA and NVIDIA's
// OpenCL) is recognised by its PCI bus ID: each entry then names the other views in
// SameCard.
//
// Select and Open apply the selection policy. A spec is a full device ID, a backend name
// ("opencl"), or a class ("gpu", "accelerator", "cpu"); when empty, the environment
// variable PRISM_DEVICE gives it, and when that is empty too the policy picks: GPU before
// accelerator before CPU; for one card seen through both APIs, CUDA first; then the device
// with the larger estimated peak (compute units times clock). PRISM_TRACE=1 prints the
// choice and the reason on stderr.
//
// Package platform is safe for concurrent use.
//
// docs/ARCHITECTURE.md places platform in the layers: it imports engine only, and bench
// and cmd/prism build on it.
package platform
