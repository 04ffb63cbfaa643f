// Package group runs collectives (AllReduce, AllGather, ReduceScatter, Broadcast) across
// a group of devices: the devices of this process (New), or those of several processes
// that meet at a rendezvous (Join): a TCP address the user names, or the one a launcher
// sets in the environment (torchrun's MASTER_ADDR and RANK, Slurm's SLURM_PROCID;
// RendezvousFromEnv).
//
// Collectives run through the devices' collective library where the backend offers one
// (NCCL on CUDA, through driver.CollectiveProvider), else staged through host memory and
// TCP, with the same results and the same API. It builds on package engine's devices,
// queues and buffers; backends implement the library side in engine/driver.
package group
