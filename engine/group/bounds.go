package group

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a group accepts from its environment and its peers. Every count and length a peer
// announces is checked against these, and against the group's own plan, before anything
// is allocated for it.
const (
	// MaxProcesses is the most processes a rendezvous joins (Rendezvous.Size,
	// PRISM_WORLD_SIZE, WORLD_SIZE, SLURM_NTASKS): every other process holds a connection
	// to process 0.
	MaxProcesses = 1 << 16
	// MaxProcessDevices is the most devices one process brings to a group.
	MaxProcessDevices = 1 << 10
	// MaxRanks is the most ranks (devices of every process) a group holds.
	MaxRanks = 1 << 16
)

const (
	// maxHeader bounds a frame's JSON header: a hello naming MaxProcessDevices devices
	// fits with room to spare.
	maxHeader = 1 << 20
	// maxPeerText bounds a text a peer sends (a refusal, why its devices cannot join a
	// communicator, a device's name): longer ones are refused.
	maxPeerText = 1 << 10
	// maxCollectiveID bounds a collective library's communicator identity (NCCL's is 128
	// bytes).
	maxCollectiveID = 1 << 12
	// maxFrameParts bounds the byte parts of one frame: one per rank of a process.
	maxFrameParts = MaxProcessDevices
	// maxPartBytes bounds one byte part as announced, before it is checked against the
	// collective's own size (one rank's buffer).
	maxPartBytes = 1 << 40
	// maxPending bounds the connections process 0 holds before they prove themselves:
	// more are closed at once.
	maxPending = 64
)

// peerText returns s, a text from a peer, fit for a terminal or a report: every rune that
// is not graphic (control and escape characters, bidi and other format characters) and
// every byte that is not UTF-8 is written as a Go escape (\x1b, \u202e), so that the text
// cannot move the cursor, recolour the terminal or reorder what follows it; past
// maxPeerText bytes it is cut, and "..." says so.
func peerText(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		if b.Len() >= maxPeerText {
			b.WriteString("...")
			break
		}
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[0])|0x100, 16)[1:])
		case r == ' ' || unicode.IsGraphic(r) && !unicode.Is(unicode.Bidi_Control, r):
			b.WriteString(s[:n])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}
