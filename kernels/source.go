package kernels

import "strings"

// Header returns the header comment an OpenCL C source opens with (a family's purpose,
// arguments, tunables with defaults, variants and launch), without the comment markers.
func Header(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "//") {
			break
		}
		line = strings.TrimPrefix(strings.TrimPrefix(line, "//"), " ")
		b.WriteString(line + "\n")
	}
	return b.String()
}

// HeaderSection returns the section of a source's header that starts with name
// ("Tunables", "Variants"): its first line and the lines indented under it; "" when the
// header has no such section.
func HeaderSection(src, name string) string {
	var out []string
	in := false
	for _, line := range strings.Split(Header(src), "\n") {
		switch {
		case strings.HasPrefix(line, name):
			in = true
		case in && (line == "" || !strings.HasPrefix(line, " ")):
			in = false
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
