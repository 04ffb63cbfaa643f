package cuda

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"strings"
)

// This file reads how many parameters each kernel of a module image declares, from the
// image itself: NVRTC's CUBIN records one EIATTR_KPARAM_INFO attribute per parameter in
// the kernel's .nv.info.<name> section, and PTX declares them in the kernel's .entry line.
// With the count in hand, Kernel asks cuFuncGetParamInfo for exactly the parameters that
// exist: on drivers without cuFuncGetParamCount (CUDA 13.0's 580 has none) the only other
// way is to ask past the last one until the driver says CUDA_ERROR_INVALID_VALUE, a failed
// call that compute-sanitizer reports as an API error on every kernel lookup.

// .nv.info attribute encoding: a record is a format byte, an attribute byte and a 16-bit
// field; for EIFMT_SVAL the field is the length of the payload that follows, for the other
// formats it is the value itself.
const (
	nvInfoFormatSVAL  = 0x04 // EIFMT_SVAL
	nvInfoKParamInfo  = 0x17 // EIATTR_KPARAM_INFO: index u32, ordinal u16, offset u16, flags u32
	nvInfoKParamBytes = 12
)

// imageParams returns the number of parameters of each kernel in a CUBIN or PTX image,
// by kernel name. A kernel whose count cannot be read with certainty is left out (its
// parameters are then probed); a malformed image gives an empty map, never a panic.
func imageParams(image []byte) map[string]int {
	if bytes.HasPrefix(image, []byte(elf.ELFMAG)) {
		return cubinParams(image)
	}
	return ptxParams(image)
}

// cubinParams reads the EIATTR_KPARAM_INFO records of every .nv.info.<name> section.
// Ordinals must be 0..n-1, each once, for the count to be believed.
func cubinParams(image []byte) map[string]int {
	counts := map[string]int{}
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return counts
	}
	for _, s := range f.Sections {
		name, ok := strings.CutPrefix(s.Name, ".nv.info.")
		if !ok || name == "" || s.Type == elf.SHT_NOBITS {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if n, ok := kparamCount(data); ok {
			counts[name] = n
		}
	}
	return counts
}

// kparamCount walks one .nv.info section's records and counts the kernel's parameters;
// ok is false where the records do not describe parameters 0..n-1 exactly once each, or
// the section is cut short.
func kparamCount(data []byte) (n int, ok bool) {
	seen := map[uint16]bool{}
	maxOrdinal := -1
	for len(data) > 0 {
		if len(data) < 4 {
			return 0, false
		}
		format, attr, field := data[0], data[1], binary.LittleEndian.Uint16(data[2:4])
		data = data[4:]
		if format != nvInfoFormatSVAL {
			continue
		}
		if int(field) > len(data) {
			return 0, false
		}
		payload := data[:field]
		data = data[field:]
		if attr != nvInfoKParamInfo {
			continue
		}
		if len(payload) < nvInfoKParamBytes {
			return 0, false
		}
		ordinal := binary.LittleEndian.Uint16(payload[4:6])
		if seen[ordinal] || int(ordinal) >= maxParams {
			return 0, false
		}
		seen[ordinal] = true
		maxOrdinal = max(maxOrdinal, int(ordinal))
	}
	if len(seen) != maxOrdinal+1 {
		return 0, false
	}
	return len(seen), true
}

// ptxParams reads every ".entry name(...)" of a PTX text and counts the ".param"
// declarations between its parentheses. An entry without parentheses declares none.
func ptxParams(image []byte) map[string]int {
	counts := map[string]int{}
	text := string(bytes.TrimRight(image, "\x00"))
	for {
		i := strings.Index(text, ".entry")
		if i < 0 {
			return counts
		}
		text = text[i+len(".entry"):]
		if text == "" || !isPTXSpace(text[0]) {
			continue // a longer word such as .entryx
		}
		rest := strings.TrimLeft(text, " \t\r\n")
		end := strings.IndexFunc(rest, func(r rune) bool { return !isPTXIdent(r) })
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			continue
		}
		name, after := rest[:end], strings.TrimLeft(rest[end:], " \t\r\n")
		if !strings.HasPrefix(after, "(") {
			counts[name] = 0
			continue
		}
		closing := strings.IndexByte(after, ')')
		if closing < 0 {
			return counts
		}
		counts[name] = strings.Count(after[:closing], ".param")
		text = after[closing:]
	}
}

func isPTXSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// isPTXIdent reports whether r may appear in a PTX identifier ([a-zA-Z0-9_$%]).
func isPTXIdent(r rune) bool {
	return r == '_' || r == '$' || r == '%' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
