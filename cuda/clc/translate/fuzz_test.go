package translate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// FuzzTranslate feeds any OpenCL C source and file name to the translation for NVRTC: the
// prelude comes first, then one #line directive whose quoted name reads back as the name
// given (so that NVRTC's messages point into the user's file), then the source rewritten
// (Source) with every line where it was; or, for a construct with no CUDA
// counterpart, an error wrapping engine.ErrUnsupported and an #error directive.
func FuzzTranslate(f *testing.F) {
	f.Add("__kernel void k(__global float* x) { x[get_global_id(0)] = 1.0f; }", "kernel.cl")
	f.Add("", "")
	f.Add("#line 7 \"other.cl\"\n", "a\nb\"c\\d")
	f.Add("/* unterminated", "\xff\x00\u2028.cl")
	f.Add("v.xy = (float4)(k).s1\n.x + (int2)-a[1].lo;\n#define S(v) (v).odd\\\n.hi\n", "k.cl")
	if files, err := filepath.Glob("testdata/corpus/*.cl"); err == nil {
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(string(b), filepath.Base(file))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src, name string) {
		out := nvrtcText(src, name)
		rest, ok := strings.CutPrefix(out, Prelude()+"\n")
		if !ok {
			t.Fatalf("the translation does not start with the prelude")
		}
		text, err := Source(src, name)
		if err != nil {
			if !errors.Is(err, engine.ErrUnsupported) || !strings.HasPrefix(rest, "#error ") {
				t.Fatalf("a translation error %v is not ErrUnsupported with an #error directive", err)
			}
			_, rest, _ = strings.Cut(rest, "\n")
			text = src
		}
		directive, body, ok := strings.Cut(rest, "\n")
		if !ok || body != text {
			t.Fatalf("the translated source does not follow one directive line")
		}
		if strings.Count(text, "\n") != strings.Count(src, "\n") {
			t.Fatalf("the translation has %d newlines, the source %d", strings.Count(text, "\n"), strings.Count(src, "\n"))
		}
		quoted, ok := strings.CutPrefix(directive, "#line 1 ")
		if !ok {
			t.Fatalf("directive %q is not #line 1", directive)
		}
		if got, err := cUnquote(quoted); err != nil || got != name {
			t.Fatalf("name %q quoted as %s reads back as %q (%v)", name, quoted, got, err)
		}
	})
}

// cUnquote reads a C string literal as cQuote writes it, and only such: escapes of a
// backslash, a double quote and three octal digits; no raw control character.
func cUnquote(q string) (string, error) {
	body, ok := strings.CutPrefix(q, `"`)
	if body, ok = strings.CutSuffix(body, `"`); !ok || len(q) < 2 {
		return "", fmt.Errorf("%s is not quoted", q)
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '"' || c < 0x20 || c == 0x7F:
			return "", fmt.Errorf("a raw %q at %d", c, i)
		case c != '\\':
			b.WriteByte(c)
		case i+1 < len(body) && (body[i+1] == '\\' || body[i+1] == '"'):
			b.WriteByte(body[i+1])
			i++
		default:
			v, err := strconv.ParseUint(body[i+1:min(i+4, len(body))], 8, 8)
			if err != nil || i+4 > len(body) {
				return "", fmt.Errorf("a bad escape at %d: %v", i, err)
			}
			b.WriteByte(byte(v))
			i += 3
		}
	}
	return b.String(), nil
}

func TestCQuote(t *testing.T) {
	for in, want := range map[string]string{
		"kernel.cl":  `"kernel.cl"`,
		"\xffa.cl":   `"\377a.cl"`,
		"a\nb\"c\\d": `"a\012b\"c\\d"`,
		"été.cl":     `"été.cl"`,
		"\uFFFD":     "\"\uFFFD\"",
	} {
		if got := cQuote(in); got != want {
			t.Errorf("cQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
