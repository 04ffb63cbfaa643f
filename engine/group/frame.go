package group

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Every message between processes is a frame: a 4-byte length and a JSON header, then the
// header's byte parts, each as long as the header's Parts says (all little-endian). A
// frame is read in three steps, none of which trusts what the peer announced: the
// header's length is checked against maxHeader and the header read as it arrives (a
// length announced but not sent allocates nothing); the announced parts are checked
// against maxFrameParts and maxPartBytes and then by the caller against what the group's
// own plan expects, before any part is allocated; each part is then read in full, a short
// one an error.

// header is a frame's JSON part: a challenge, hello, plan or collective message, and the
// lengths of the byte parts that follow.
type header struct {
	Challenge *challenge `json:",omitempty"`
	Hello     *hello     `json:",omitempty"`
	Plan      *plan      `json:",omitempty"`
	Op        *message   `json:",omitempty"`
	Parts     []int64    `json:",omitempty"`
}

// errSkipParts, from a frame's check, has readFrame read past the frame's parts without
// keeping them.
var errSkipParts = errors.New("skip the parts")

// errFrame marks a frame that is not what the protocol allows.
var errFrame = errors.New("not a Prism group frame")

// readFrame reads one frame from r. check, called once the header is decoded and its
// parts' lengths are within the maxima, decides whether the parts are what the caller
// expects (an error refuses the frame before any part is read; errSkipParts reads past
// them); nil allows no part at all.
func readFrame(r io.Reader, check func(h *header) error) (header, [][]byte, error) {
	var h header
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return h, nil, err
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size > maxHeader {
		return h, nil, fmt.Errorf("a header of %d bytes, more than %d: %w", size, maxHeader, errFrame)
	}
	// Read as it arrives: a peer that announces more than it sends costs what it sent.
	var js bytes.Buffer
	if m, err := js.ReadFrom(io.LimitReader(r, int64(size))); err != nil {
		return h, nil, err
	} else if m < int64(size) {
		return h, nil, fmt.Errorf("a header of %d bytes ended after %d: %w", size, m, io.ErrUnexpectedEOF)
	}
	if err := json.Unmarshal(js.Bytes(), &h); err != nil {
		return h, nil, fmt.Errorf("%v: %w", err, errFrame)
	}
	if len(h.Parts) > maxFrameParts {
		return h, nil, fmt.Errorf("%d parts announced, more than %d: %w", len(h.Parts), maxFrameParts, errFrame)
	}
	for i, sz := range h.Parts {
		if sz < 0 || sz > maxPartBytes {
			return h, nil, fmt.Errorf("part %d announced as %d bytes, outside 0 to %d: %w", i, sz, int64(maxPartBytes), errFrame)
		}
	}
	skip := false
	if check == nil {
		if len(h.Parts) > 0 {
			return h, nil, fmt.Errorf("%d parts announced where none belongs: %w", len(h.Parts), errFrame)
		}
	} else if err := check(&h); errors.Is(err, errSkipParts) {
		skip = true
	} else if err != nil {
		return h, nil, err
	}
	parts := make([][]byte, len(h.Parts))
	for i, sz := range h.Parts {
		if skip {
			if m, err := io.CopyN(io.Discard, r, sz); err != nil {
				return h, nil, fmt.Errorf("part %d of %d bytes ended after %d: %w", i, sz, m, io.ErrUnexpectedEOF)
			}
			continue
		}
		parts[i] = make([]byte, sz)
		if m, err := io.ReadFull(r, parts[i]); err != nil {
			return h, nil, fmt.Errorf("part %d of %d bytes ended after %d: %w", i, sz, m, io.ErrUnexpectedEOF)
		}
	}
	if skip {
		parts = nil
	}
	return h, parts, nil
}

// writeFrame writes one frame to w, the lengths of parts in its header.
func writeFrame(w io.Writer, h header, parts [][]byte) error {
	h.Parts = make([]int64, len(parts))
	for i, p := range parts {
		h.Parts[i] = int64(len(p))
	}
	js, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(js)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// link is one TCP connection, framed.
type link struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// linkBuffer is the size of a link's read and write buffers; larger parts bypass them.
const linkBuffer = 64 << 10

func newLink(c net.Conn) *link {
	return &link{c: c, r: bufio.NewReaderSize(c, linkBuffer), w: bufio.NewWriterSize(c, linkBuffer)}
}

// send writes one frame, bounded by ctx.
func (l *link) send(ctx context.Context, h header, parts [][]byte) error {
	defer deadline(ctx, l.c)()
	if err := writeFrame(l.w, h, parts); err != nil {
		return l.failed(ctx, err)
	}
	return l.failed(ctx, l.w.Flush())
}

// recv reads one frame, bounded by ctx; check is readFrame's.
func (l *link) recv(ctx context.Context, check func(h *header) error) (header, [][]byte, error) {
	defer deadline(ctx, l.c)()
	h, parts, err := readFrame(l.r, check)
	return h, parts, l.failed(ctx, err)
}

// failed wraps a connection error, naming ctx's error when ctx ended the wait.
func (l *link) failed(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("group: group peer %s: %w", l.c.RemoteAddr(), ctx.Err())
	}
	return fmt.Errorf("group: group peer %s: %w", l.c.RemoteAddr(), err)
}

// deadline makes c's reads and writes fail once ctx is done, and returns what undoes it.
func deadline(ctx context.Context, c net.Conn) func() {
	stop := context.AfterFunc(ctx, func() {
		defer func() { recover() }() // a connection's own bug must not end the process
		c.SetDeadline(time.Unix(1, 0))
	})
	return func() {
		if !stop() {
			c.SetDeadline(time.Time{})
		}
	}
}
