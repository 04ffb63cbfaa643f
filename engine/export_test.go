package engine

// SetTransferChunk makes Read and Write move at most bytes per driver call until the
// returned function restores the default, so that tests see chunks without allocating
// hundreds of megabytes.
func SetTransferChunk(bytes int64) (restore func()) {
	old := transferChunk
	transferChunk = bytes
	return func() { transferChunk = old }
}

// SetPeerStageBytes makes CopyPeer's host staging move at most bytes a chunk until the
// returned function restores the default.
func SetPeerStageBytes(bytes int) (restore func()) {
	old := peerStageBytes
	peerStageBytes = bytes
	return func() { peerStageBytes = old }
}

// CacheBuilds makes the builds of the named backend go through the program cache until
// the returned function restores the default.
func CacheBuilds(backend string) (restore func()) {
	old := cachedBackends[backend]
	cachedBackends[backend] = true
	return func() { cachedBackends[backend] = old }
}

// IdleProgramsMax is how many compiled programs a device keeps with no Program holding them.
const IdleProgramsMax = idleMax

// DrainPrograms closes the compiles d keeps and stops it keeping more, as its Close does.
func DrainPrograms(d *Device) error { return d.progs.drain() }
