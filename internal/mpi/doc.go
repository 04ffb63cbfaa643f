// Package mpi binds the MPI library a launcher (mpirun, mpiexec, srun) started this
// process with, loaded with dlopen at run time through internal/dl: Open MPI's
// libmpi.so.40 and the MPICH family's libmpi.so.12 (MPICH, Intel MPI, MVAPICH, Cray MPICH),
// whose ABIs differ. Open MPI's handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM) are the
// addresses of global structures the library exports (ompi_mpi_comm_world, ...), found
// with dlsym; MPICH's are integers fixed by its mpi.h (MPI_COMM_WORLD is 0x44000000), and
// its functions take them as int. A build needs no MPI, and a binary without one starts:
// Open says which files it tried.
//
// It registers itself as engine/group's transport in init (group.RegisterTransport), so
// that a program that imports it (the prism CLI does) runs the collectives of groups
// across processes, staged through host memory, through MPI's collectives rather than
// Prism's own TCP frames. Nothing is loaded before a group asks for it.
//
// Every MPI call runs on one goroutine locked to one OS thread, the one that initialized
// MPI (MPI_THREAD_FUNNELED), one call at a time; MPI returns errors rather than ending the
// process (MPI_ERRORS_RETURN on MPI_COMM_WORLD).
package mpi
