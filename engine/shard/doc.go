// Package shard holds data split over the devices of a group: a Buffer of n elements
// whose parts live on several devices, by rows (contiguous ranges of rows of a row-major
// array, a 1-D array being rows of one element), by blocks (blocks of a fixed size dealt
// to the devices in turn) or replicated (every device holds all of it).
//
// A Buffer is made from host data (Scatter), from buffers already on the devices
// (FromBuffers) or as an uninitialised output laid out like another (Like). Its data
// leaves the devices only when asked: Gather reads it back to the host. Split operations
// in the kernel families take and return Buffers, so that a chain of them runs where the
// data lives. Reductions over shards finish with Combine: a collective through
// engine/group's all-reduce where a group of the shards' devices is given (NewGroup makes
// one where the devices offer a collective library, NCCL on CUDA), else an explicit
// combine on the host.
//
// The package sits on engine and engine/group and imports nothing else of the module.
package shard
