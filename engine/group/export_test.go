package group

// SetShmChunk sets the piece of a pipelined all-reduce through shared memory (bytes), so
// that small tests run many pieces.
func SetShmChunk(n int) { shmChunk, deviceChunk = n, n }

// SetDeviceBuildFails makes this process fail to build the device's reduction kernels.
func SetDeviceBuildFails(on bool) { failDeviceBuild = on }

// SetMapPath makes the processes other than 0 map the file f names for process 0's
// segment.
func SetMapPath(f func(path string) string) { mapPath = f }

// SetBounce passes the shared all-reduce's pieces through the device's host buffers, as
// where the segment could not be page-locked.
func SetBounce(on bool) { forceBounce = on }

// SetDeviceReduce reduces shared all-reduces on the device where nothing page-locks the segment.
func SetDeviceReduce(on bool) { forceDevice = on }

// SetShmSizes sets the size of the first shared segment and the largest process 0 makes
// (0: no limit), so that small tests grow it and meet the limit.
func SetShmSizes(first, most int64) { shmMin, shmMaxBytes = first, most }
