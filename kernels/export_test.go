package kernels

// SetChunkLen makes the chunks of NewInputsChunked, LastChunks and CheckElementwise n
// elements long and returns the function that restores the length.
func SetChunkLen(n int) (restore func()) {
	old := chunkLen
	chunkLen = n
	return func() { chunkLen = old }
}
