package group

// SetShmChunk sets the piece of a pipelined all-reduce through shared memory (bytes), so
// that small tests run many pieces.
func SetShmChunk(n int) { shmChunk = n }
