//go:build !noopencl && linux

package cl

import (
	"bytes"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// stderrCapture is one redirection of file descriptor 2: orig is the descriptor it had,
// r the pipe's read end that drain empties.
type stderrCapture struct {
	orig *os.File
	fd   int // orig's descriptor
	r    int
	done chan struct{}
}

// openStderrCapture keeps a duplicate of file descriptor 2, points 2 at a new pipe, sends
// Go's fatal errors to the duplicate (debug.SetCrashOutput), so that a crash inside a
// window still prints, and starts draining the pipe.
func openStderrCapture() (*stderrCapture, error) {
	orig, err := syscall.Dup(2)
	if err != nil {
		return nil, os.NewSyscallError("dup(2)", err)
	}
	syscall.CloseOnExec(orig)
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(orig)
		return nil, os.NewSyscallError("pipe2", err)
	}
	// dup3 onto 2 leaves 2 without close-on-exec: child processes inherit it as their
	// standard error, as before.
	if err := syscall.Dup3(p[1], 2, 0); err != nil {
		syscall.Close(orig)
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, os.NewSyscallError("dup3", err)
	}
	syscall.Close(p[1]) // 2 is now the only write end
	c := &stderrCapture{orig: os.NewFile(uintptr(orig), "stderr"), fd: orig, r: p[0], done: make(chan struct{})}
	debug.SetCrashOutput(c.orig, debug.CrashOptions{})
	go c.drain()
	return c, nil
}

// close points file descriptor 2 back at the original, which ends the pipe once every
// write end is gone, and waits (at most drainWait) for the drain to forward the rest.
func (c *stderrCapture) close() {
	for {
		err := syscall.Dup3(c.fd, 2, 0)
		if err != syscall.EINTR {
			break
		}
	}
	debug.SetCrashOutput(nil, debug.CrashOptions{})
	select {
	case <-c.done:
	case <-time.After(drainWait):
	}
}

// drain reads the pipe until its end, passing each line through a chatterFilter:
// chatter goes to the trace, other lines to the original stderr, byte for byte. It reads
// with blocking system calls, so a line reaches the original stderr as soon as it is
// written, even when the process is about to die (a driver's failed assertion). A line
// that starts with a carriage return or an escape (a progress line, written without its
// end) cannot be chatter: the rest of that read is forwarded at once, up to its first line
// end, less the chatter that ends it where two writes were read at once.
func (c *stderrCapture) drain() {
	defer close(c.done)
	defer c.orig.Close()
	defer syscall.Close(c.r)
	trace := tracing()
	var f chatterFilter
	emit := func(line string, chatter bool) {
		if !chatter {
			c.orig.WriteString(line)
			return
		}
		if trace {
			traceTo(c.orig, "driver's compiler: %s", strings.TrimRight(line, "\r\n"))
		}
	}
	buf := make([]byte, 32<<10)
	var part []byte // the current line's bytes so far
	for {
		n, err := syscall.Read(c.r, buf)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 {
			break
		}
		b := buf[:n]
		passing := false // this read, a write of its own, is forwarded up to its first line end
		for len(b) > 0 {
			if len(part) == 0 && !passing && (b[0] == '\r' || b[0] == 0x1b) {
				passing = true
			}
			i := bytes.IndexByte(b, '\n')
			if passing {
				end := len(b)
				if i >= 0 {
					end = i + 1
					passing = false
				}
				seg := b[:end]
				if k := chatterSuffix(seg); k > 0 {
					// Two writes read at once: a progress line, then chatter.
					c.orig.Write(seg[:k])
					f.push(string(seg[k:]), emit)
				} else {
					c.orig.Write(seg)
				}
				b = b[end:]
				continue
			}
			if i < 0 {
				part = append(part, b...)
				break
			}
			part = append(part, b[:i+1]...)
			b = b[i+1:]
			f.push(string(part), emit)
			part = part[:0]
		}
	}
	if len(part) > 0 {
		f.push(string(part), emit)
	}
	f.flush(emit)
}
