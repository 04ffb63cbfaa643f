// Package boundedio reads files that Prism did not just write itself and so cannot trust
// (tuning files, compiled-kernel cache entries, saved reports, NumPy inputs): only regular
// files, never more than a stated number of bytes, and never waiting on a named pipe. A
// FIFO, a device such as /dev/zero (or a link to one), a directory or a socket at the path
// is an error at once that names the path and what it is; a file larger than the limit is
// an error that names its size and the limit, before any of it is read.
//
// Its functions are safe for concurrent use.
package boundedio
