//go:build !noopencl

package cl

// The drivers' compilers write to the process's standard error themselves: PoCL's clang
// prints its warnings and "N warnings generated.", Mesa prints "MESA: warning: ...", none
// of it through the build log. While a driver call that compiles runs, file descriptor 2
// is a pipe that this file drains: the compilers' chatter goes to the trace, every other
// line to the standard error the process had, as it arrives.

import (
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// EnvDriverStderr names the variable that, set to 1, leaves the drivers' compilers'
// output on standard error: file descriptor 2 is then never redirected.
const EnvDriverStderr = "PRISM_DRIVER_STDERR"

// driverStderr is the process's capture of file descriptor 2: open while depth > 0.
var driverStderr struct {
	mu    sync.Mutex
	depth int
	cur   *stderrCapture
}

// drainWait bounds how long closing the last window waits for its drain to finish: a
// child process started during the window may hold the pipe open, and the drain then
// goes on forwarding in the background.
const drainWait = 2 * time.Second

// captureDriverStderr opens a window around a driver call that may compile and returns
// the function that closes it (idempotent). Windows nest and overlap across goroutines:
// the first one opened redirects file descriptor 2 into a pipe, the last one closed puts
// the original back and waits for the pipe to drain. Under PRISM_DRIVER_STDERR=1, or where
// the redirection fails (said in the trace), it does nothing.
func captureDriverStderr() (release func()) {
	if os.Getenv(EnvDriverStderr) == "1" {
		return func() {}
	}
	s := &driverStderr
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.depth == 0 {
		c, err := openStderrCapture()
		if err != nil {
			tracef("the drivers' compilers' output stays on stderr: %v", err)
			return func() {}
		}
		s.cur = c
	}
	s.depth++
	var once sync.Once
	return func() { once.Do(leaveDriverStderr) }
}

// leaveDriverStderr closes one window; the last one restores file descriptor 2.
func leaveDriverStderr() {
	s := &driverStderr
	s.mu.Lock()
	defer s.mu.Unlock()
	s.depth--
	if s.depth > 0 {
		return
	}
	c := s.cur
	s.cur = nil
	c.close()
}

var (
	// chatterGenerated is clang's count of the warnings it printed.
	chatterGenerated = regexp.MustCompile(`^\d+ warnings? generated\.$`)
	// chatterDiagnostic is a clang diagnostic: an optional location, then its level.
	chatterDiagnostic = regexp.MustCompile(`^(?:\S[^:]*:\d+:(?:\d+:)? )?(warning|note|remark|error|fatal error): `)
	// chatterCaret is clang's line under a source excerpt: a caret and tildes.
	chatterCaret = regexp.MustCompile(`^[ \t~]*\^[ \t~^]*$`)
	// chatterInclude is clang's "In file included from" chain before a diagnostic.
	chatterInclude = regexp.MustCompile(`^In file included from .*:\d+:$`)
	// chatterTail is a count of warnings or a Mesa warning at the end of a line.
	chatterTail = regexp.MustCompile(`(\d+ warnings? generated\.|MESA: warning: [^\r\n]*)\r?\n$`)
)

// chatterSuffix returns where chatter begins at the end of b, a progress line and the
// line written right after it, read at once; 0 where b ends with none.
func chatterSuffix(b []byte) int {
	if loc := chatterTail.FindIndex(b); loc != nil {
		return loc[0]
	}
	return 0
}

// chatterFilter sorts the lines a driver's compiler and the rest of the process write to
// stderr: a line is chatter when it is clang's "N warnings generated.", Mesa's
// "MESA: warning: ...", or part of a clang warning: the diagnostic line, its notes, the
// source excerpt and caret line under each, and the "In file included from" lines before
// it. Every other line (errors and their notes included) is not. Some lines are decided
// only by the next one (an excerpt by its caret, an include chain by its diagnostic), so
// they wait in held. The zero value is ready; it is used by one goroutine at a time.
type chatterFilter struct {
	held     []string // lines decided by the next one
	excerpt  bool     // held is a possible source excerpt (else an include chain)
	warning  bool     // the last diagnostic was a warning: its notes and excerpts are chatter
	afterDia bool     // the previous line was a diagnostic of the warning: an excerpt may follow
}

// push takes one line, with its line end when it has one, and calls emit for each line
// it has decided, in order.
func (f *chatterFilter) push(line string, emit func(line string, chatter bool)) {
	text := strings.TrimRight(line, "\r\n")
	if len(f.held) > 0 {
		if f.excerpt {
			held := f.held[0]
			f.held = f.held[:0]
			if chatterCaret.MatchString(text) {
				emit(held, true)
				emit(line, true)
				return
			}
			// Not an excerpt after all: the held line is decided on its own.
			f.warning = false
			f.decide(held, strings.TrimRight(held, "\r\n"), emit)
		} else {
			if chatterInclude.MatchString(text) {
				f.held = append(f.held, line)
				return
			}
			m := chatterDiagnostic.FindStringSubmatch(text)
			chatter := m != nil && m[1] == "warning"
			for _, h := range f.held {
				emit(h, chatter)
			}
			f.held = f.held[:0]
		}
	}
	f.decide(line, text, emit)
}

// decide classifies line (text is line without its end) with no line held.
func (f *chatterFilter) decide(line, text string, emit func(line string, chatter bool)) {
	after := f.afterDia
	f.afterDia = false
	switch m := chatterDiagnostic.FindStringSubmatch(text); {
	case chatterGenerated.MatchString(text), strings.HasPrefix(text, "MESA: warning: "):
		f.warning = false
		emit(line, true)
	case m != nil:
		switch m[1] {
		case "warning":
			f.warning = true
		case "note", "remark":
		default:
			f.warning = false
		}
		if f.warning {
			f.afterDia = true
		}
		emit(line, f.warning)
	case chatterInclude.MatchString(text):
		f.held, f.excerpt = append(f.held, line), false
	case f.warning && chatterCaret.MatchString(text):
		emit(line, true)
	case after:
		f.held, f.excerpt = append(f.held, line), true
	default:
		f.warning = false
		emit(line, false)
	}
}

// flush decides the lines still held, which no next line will: they are not chatter.
func (f *chatterFilter) flush(emit func(line string, chatter bool)) {
	for _, h := range f.held {
		emit(h, false)
	}
	f.held = f.held[:0]
	f.warning, f.afterDia = false, false
}
