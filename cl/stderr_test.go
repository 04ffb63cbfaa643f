//go:build !noopencl && linux

package cl

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestChatterFilter sorts the lines of stderr as the drain does: the compilers' chatter
// apart, every other line kept, in order and byte for byte.
func TestChatterFilter(t *testing.T) {
	type line struct {
		text    string
		chatter bool
	}
	for _, tc := range []struct {
		name  string
		lines []line
	}{
		{"counts", []line{{"4 warnings generated.\n", true}, {"1 warning generated.\n", true}, {"2 errors generated.\n", false}}},
		{"mesa", []line{{"MESA: warning: Treating load_kernel_arg in control flow as uniform, results may be incorrect.\n", true},
			{"MESA: error: something failed\n", false}}},
		{"other lines", []line{{"prism: bench: gemm/nn/float32 on opencl:0:0\n", false}, {"no newline at the end", false},
			{"warning generated.\n", false}, {"  ^\n", false}}},
		{"warning with excerpt", []line{
			{"<stdin>:3:11: warning: implicit conversion from 'int' to 'char' changes value from 1000 to -24 [-Wconstant-conversion]\n", true},
			{"        char c = 1000;\n", true},
			{"             ~   ^~~~\n", true},
			{"1 warning generated.\n", true},
			{"after\n", false}}},
		{"warning without location, notes", []line{
			{"warning: argument unused during compilation: '-cl-mad-enable'\n", true},
			{"/tmp/x/program.cl:7:3: note: previous definition is here\n", true},
			{"  int n;\n", true},
			{"  ^\n", true}}},
		{"include chain", []line{
			{"In file included from <built-in>:1:\n", true},
			{"In file included from /usr/include/pocl/_kernel.h:3:\n", true},
			{"/usr/include/pocl/_kernel_c.h:9:1: warning: unused function 'f'\n", true}}},
		{"include chain of an error", []line{
			{"In file included from <built-in>:1:\n", false},
			{"/tmp/p.cl:2:1: error: unknown type name 'flaot'\n", false},
			{"flaot x;\n", false},
			{"^\n", false},
			{"/tmp/p.cl:1:1: note: declared here\n", false}}},
		{"line after a warning that is no excerpt", []line{
			{"p.cl:1:1: warning: w\n", true},
			{"prism: a real message\n", false},
			{"another real one\n", false}}},
		{"excerpt that never gets its caret", []line{
			{"p.cl:1:1: warning: w\n", true},
			{"held to the end\n", false}}},
		{"crlf", []line{{"3 warnings generated.\r\n", true}, {"kept\r\n", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []line
			emit := func(l string, chatter bool) { got = append(got, line{l, chatter}) }
			var f chatterFilter
			for _, l := range tc.lines {
				f.push(l.text, emit)
			}
			f.flush(emit)
			if len(got) != len(tc.lines) {
				t.Fatalf("%d lines out, want %d: %v", len(got), len(tc.lines), got)
			}
			for i := range got {
				if got[i] != tc.lines[i] {
					t.Errorf("line %d: got %q chatter=%v, want %q chatter=%v", i, got[i].text, got[i].chatter, tc.lines[i].text, tc.lines[i].chatter)
				}
			}
		})
	}
}

// TestChatterSuffix finds the chatter that a progress line read at once with the next
// line ends with.
func TestChatterSuffix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"\r\x1b[Kprogress a4 warnings generated.\n", 14},
		{"\r\x1b[Kprogress aMESA: warning: Treating load_kernel_arg as uniform.\n", 14},
		{"\r\x1b[Kprogress a\n", 0},
		{"\r\x1b[Kprogress a, prism: a message\n", 0},
	} {
		if got := chatterSuffix([]byte(tc.in)); got != tc.want {
			t.Errorf("chatterSuffix(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// redirectFD2 points file descriptor 2 at a new file for the test and returns a function
// that reads what was written there; fd 2 is restored when the test ends.
func redirectFD2(t *testing.T) (read func() string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(f.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Dup3(saved, 2, 0)
		syscall.Close(saved)
		f.Close()
	})
	return func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// TestDriverStderrForwards writes to file descriptor 2 during windows, from other
// goroutines too: the chatter goes to the trace (with PRISM_TRACE=1) or nowhere, every
// other line, a progress line without its end included, to the original stderr.
func TestDriverStderrForwards(t *testing.T) {
	for _, trace := range []bool{false, true} {
		t.Run(map[bool]string{false: "quiet", true: "trace"}[trace], func(t *testing.T) {
			t.Setenv(EnvDriverStderr, "")
			t.Setenv("PRISM_TRACE", map[bool]string{false: "", true: "1"}[trace])
			read := redirectFD2(t)
			outer := captureDriverStderr()
			var wg sync.WaitGroup
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					inner := captureDriverStderr() // windows nest and overlap
					defer inner()
					os.Stderr.WriteString("3 warnings generated.\n")
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				os.Stderr.WriteString("prism: a real message from elsewhere\n")
			}()
			os.Stderr.WriteString("MESA: warning: Treating load_kernel_arg in control flow as uniform, results may be incorrect.\n")
			wg.Wait()
			os.Stderr.WriteString("\r\x1b[Kprogress 3/10")
			outer()
			outer() // idempotent: the window is closed once
			os.Stderr.WriteString("after the window\n")
			got := read()
			t.Logf("stderr:\n%s", got)
			for _, want := range []string{"prism: a real message from elsewhere\n", "\r\x1b[Kprogress 3/10", "after the window\n"} {
				if !strings.Contains(got, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			bare := 0
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, "3 warnings generated.") || strings.HasPrefix(l, "MESA: ") {
					bare++
				}
			}
			if bare != 0 {
				t.Errorf("%d lines of chatter reached stderr as they were written", bare)
			}
			traced := strings.Count(got, "prism: cl: driver's compiler: 3 warnings generated.\n") +
				strings.Count(got, "prism: cl: driver's compiler: MESA: warning: ")
			if want := map[bool]int{false: 0, true: 5}[trace]; traced != want {
				t.Errorf("%d lines of chatter in the trace, want %d", traced, want)
			}
			driverStderr.mu.Lock()
			depth := driverStderr.depth
			driverStderr.mu.Unlock()
			if depth != 0 {
				t.Errorf("%d windows left open", depth)
			}
		})
	}
}

// TestDriverStderrOptOut: under PRISM_DRIVER_STDERR=1 file descriptor 2 is left alone.
func TestDriverStderrOptOut(t *testing.T) {
	t.Setenv(EnvDriverStderr, "1")
	read := redirectFD2(t)
	release := captureDriverStderr()
	os.Stderr.WriteString("1 warning generated.\n")
	release()
	if got := read(); got != "1 warning generated.\n" {
		t.Errorf("stderr has %q, want the line as written", got)
	}
}

// TestDriverStderrCrash panics inside a window in a child process: the panic still
// reaches the process's stderr.
func TestDriverStderrCrash(t *testing.T) {
	if os.Getenv("PRISM_CL_STDERR_CRASH_CHILD") == "1" {
		captureDriverStderr()
		panic("crash inside a window")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverStderrCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PRISM_CL_STDERR_CRASH_CHILD=1", EnvDriverStderr+"=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("the child did not fail")
	}
	if !strings.Contains(stderr.String(), "panic: crash inside a window") {
		t.Errorf("the child's stderr lacks its panic:\n%s", stderr.String())
	}
}

// warningSource compiles with warnings that clang gives by default (constant and literal
// conversions).
const warningSource = `
__kernel void noisy(__global int* out) {
	char c = 1000;
	int i = 1.5;
	out[get_global_id(0)] = c + i;
}
`

// TestDriverStderrPoCL builds a program that makes PoCL's clang print warnings, in a child
// process with an empty PoCL cache (so that it really compiles): they do not reach stderr,
// PRISM_TRACE=1 shows them in the trace, and PRISM_DRIVER_STDERR=1 leaves them on stderr.
func TestDriverStderrPoCL(t *testing.T) {
	if id := os.Getenv("PRISM_CL_STDERR_CHILD"); id != "" {
		dev, err := engine.Open(context.Background(), "opencl:"+id)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		p, err := dev.Build(warningSource)
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		return
	}
	id := ""
	for _, in := range testDevices(t) {
		if in.Platform == "Portable Computing Language" {
			id = in.ID
			break
		}
	}
	if id == "" {
		t.Skip("no PoCL device")
	}
	child := func(env ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestDriverStderrPoCL$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PRISM_CL_STDERR_CHILD="+id, "POCL_CACHE_DIR="+t.TempDir(), "PRISM_TRACE=", EnvDriverStderr+"=")
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("child: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		return stderr.String()
	}
	bare := func(out string) (n int) {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "warning") && !strings.HasPrefix(l, "prism: ") && !strings.HasPrefix(l, "    ") {
				n++
			}
		}
		return n
	}
	optOut := child(EnvDriverStderr + "=1")
	t.Logf("stderr under %s=1:\n%s", EnvDriverStderr, optOut)
	if bare(optOut) == 0 {
		t.Skip("PoCL's compiler printed no warning on stderr: nothing to capture")
	}
	if out := child(); bare(out) != 0 || strings.Contains(out, "warning") {
		t.Errorf("warnings reached stderr:\n%s", out)
	}
	out := child("PRISM_TRACE=1")
	if bare(out) != 0 {
		t.Errorf("warnings reached stderr outside the trace:\n%s", out)
	}
	if !strings.Contains(out, "prism: cl: driver's compiler: ") || !strings.Contains(out, "warning generated") && !strings.Contains(out, "warnings generated") {
		t.Errorf("the trace lacks the compiler's warnings:\n%s", out)
	}
}
