package mpi

import "github.com/prism-compute/prism/engine/group"

func init() {
	group.RegisterTransport("MPI", func() (group.Transport, error) {
		w, err := Open()
		if err != nil {
			return nil, err
		}
		return w, nil
	})
}
