package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress shows which step of a Run is under way: a bar redrawn in place on a terminal, or
// one plain line per step otherwise. A nil *Progress shows nothing. Safe for concurrent use.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	live        bool
	total, done int
	start       time.Time
	drawn       bool
}

// NewProgress returns a Progress writing to w; live selects the redrawn bar (for a
// terminal), otherwise it writes plain lines.
func NewProgress(w io.Writer, live bool) *Progress { return &Progress{w: w, live: live} }

func (p *Progress) begin(total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done, p.start = total, 0, time.Now()
}

// step announces that a step begins on device id.
func (p *Progress) step(id, what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if !p.live {
		fmt.Fprintf(p.w, "%s: [%d/%d] %s\n", id, p.done, p.total, what)
		return
	}
	const width = 24
	filled := 0
	if p.total > 0 {
		filled = min(width*(p.done-1)/p.total, width)
	}
	el := time.Since(p.start).Round(time.Second)
	line := fmt.Sprintf("[%s%s] %d/%d %s %s: %s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		p.done, p.total, el, id, what)
	if len(line) > 100 {
		line = line[:100]
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.drawn = true
}

// end clears the live bar and writes how long the run took.
func (p *Progress) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.drawn {
		fmt.Fprintf(p.w, "\r\x1b[K")
		p.drawn = false
	}
	fmt.Fprintf(p.w, "bench: %d steps in %s\n", p.done, time.Since(p.start).Round(10*time.Millisecond))
}
