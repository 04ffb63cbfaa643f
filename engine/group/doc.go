// Package group runs collectives (AllReduce, AllGather, ReduceScatter, Broadcast) across
// a group of devices: the devices of this process (New), or those of several processes
// that meet at a rendezvous (Join): the MPI world of processes that mpirun, mpiexec or
// srun started (Open MPI's OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), a TCP address the
// user names, or the one a launcher sets in the environment (torchrun's MASTER_ADDR and
// RANK, Slurm's SLURM_PROCID; RendezvousFromEnv).
//
// Collectives run through the devices' collective library where the backend offers one
// (NCCL on CUDA, through driver.CollectiveProvider), else staged through host memory,
// with the same results and the same API. Across processes, staged collectives go
// through MPI (a Transport that package internal/mpi registers, loading libmpi at run
// time) where the processes were started with it, and through Prism's own TCP frames
// only as the fallback, which Library and Fallback name. It builds on package engine's
// devices, queues and buffers; backends implement the library side in engine/driver.
package group
