package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress shows which step of a Run is under way, with the time spent and an estimate
// of the time left: a bar redrawn in place on a terminal, or one plain line per step
// otherwise. When the run ends it writes one summary line: the cases verified, skipped
// (the reasons counted) and failed. A nil *Progress shows nothing. Safe for concurrent
// use.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	live        bool
	total, done int
	start       time.Time
	drawn       bool
	now         func() time.Time // time.Now; tests set a clock
}

// NewProgress returns a Progress writing to w; live selects the redrawn bar (for a
// terminal), otherwise it writes plain lines.
func NewProgress(w io.Writer, live bool) *Progress {
	return &Progress{w: w, live: live, now: time.Now}
}

func (p *Progress) begin(total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done, p.start = total, 0, p.now()
}

// step announces that a step begins on device id.
func (p *Progress) step(id, what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	clock := p.clock()
	if !p.live {
		fmt.Fprintf(p.w, "%s: [%d/%d %s] %s\n", id, p.done, p.total, clock, what)
		return
	}
	const width = 20
	filled := 0
	if p.total > 0 {
		filled = min(width*(p.done-1)/p.total, width)
	}
	line := fmt.Sprintf("[%s%s] %d/%d %s %s: %s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		p.done, p.total, clock, id, what)
	if len(line) > 110 {
		line = line[:110]
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.drawn = true
}

// clock is the elapsed time and, once a few steps have finished, the time left at the
// pace so far: "0:42, ~1:30 left".
func (p *Progress) clock() string {
	el := p.now().Sub(p.start)
	s := minutes(el)
	finished := p.done - 1 // the step that begins now has not
	if finished >= 3 && p.total > p.done {
		left := el / time.Duration(finished) * time.Duration(p.total-finished)
		s += ", ~" + minutes(left) + " left"
	}
	return s
}

// minutes writes d as m:ss.
func minutes(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// end clears the live bar and writes how many steps ran and how long they took.
func (p *Progress) end() { p.finish(nil) }

// finish clears the live bar and writes the summary of rep, when not nil: how many cases
// were verified, skipped and failed; and how long the run took.
func (p *Progress) finish(rep *Report) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.drawn {
		fmt.Fprintf(p.w, "\r\x1b[K")
		p.drawn = false
	}
	took := p.now().Sub(p.start).Round(10 * time.Millisecond)
	if rep == nil {
		fmt.Fprintf(p.w, "bench: %d steps in %s\n", p.done, took)
		return
	}
	fmt.Fprintf(p.w, "bench: %s in %s\n", rep.Summary(), took)
}
