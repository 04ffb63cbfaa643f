package group

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/prism-compute/prism/engine/driver"
)

// frameBytes returns the frame of h and parts as a peer would send it.
func frameBytes(h header, parts ...[]byte) []byte {
	var b bytes.Buffer
	writeFrame(&b, h, parts)
	return b.Bytes()
}

// clean reports whether s holds only graphic characters and spaces, no bidi control.
func clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != ' ' && (!unicode.IsGraphic(r) || unicode.Is(unicode.Bidi_Control, r)) {
			return false
		}
	}
	return true
}

// FuzzRendezvousFrame decodes arbitrary bytes as the frames of a rendezvous (a
// challenge, a hello, a plan): readFrame never panics nor allocates what was only
// announced, and whatever process 0 and the other processes accept of them fits the
// group (checkHello, checkPlan) and shows escaped.
func FuzzRendezvousFrame(f *testing.F) {
	n := bytes.Repeat([]byte{7}, nonceBytes)
	h := hello{Rank: 1, Size: 2, Devices: 1, Cards: []string{"host/0000:01:00.0"}, Nonce: n, Proof: prove(testToken, roleHello, n, n)}
	f.Add(frameBytes(header{Challenge: &challenge{Nonce: n}}))
	f.Add(frameBytes(header{Hello: &h}))
	f.Add(frameBytes(header{Plan: &plan{First: 1, Ranks: 2, Why: "staged", Proof: prove(testToken, rolePlan, n, n)}}))
	f.Add(frameBytes(header{Plan: &plan{Err: "\x1b[2J\u202e"}}))
	f.Add(frameBytes(header{Plan: &plan{First: 1, Ranks: 1 << 30}}))
	f.Add(rawHeader(0xffffffff, "{"))
	f.Add(rawHeader(40, `{"Hello":{"Devices":1073741824}}`))
	f.Add(rawHeader(64, `{"Hello":{"Rank":1},"Parts":[1099511627776]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rv := Rendezvous{Addr: "127.0.0.1:29500", Rank: 1, Size: 2, Token: testToken}
		fr, parts, err := readFrame(bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		if len(parts) != 0 {
			t.Fatalf("%d parts where none belongs", len(parts))
		}
		if hi := fr.Hello; hi != nil && checkHello(*hi, rv) == nil {
			if hi.Devices < 1 || hi.Devices > MaxProcessDevices || len(hi.Cards) != hi.Devices || hi.Rank < 1 || hi.Rank >= rv.Size {
				t.Fatalf("accepted hello %+v", *hi)
			}
			verify(rv.Token, roleHello, hi.Proof, n, hi.Nonce)
			if w := planWhy([]hello{{}, *hi}); !clean(w) {
				t.Fatalf("planWhy gives %q", w)
			}
		}
		if pl := fr.Plan; pl != nil {
			if checkPlan(*pl, rv, 1) == nil && (pl.Ranks < rv.Size || pl.Ranks > MaxRanks || pl.First < rv.Rank || pl.First >= pl.Ranks || len(pl.ID) > maxCollectiveID) {
				t.Fatalf("accepted plan %+v", *pl)
			}
			if s := peerText(pl.Err); !clean(s) || len(s) > maxPeerText+8 {
				t.Fatalf("peerText(%q) = %q", pl.Err, s)
			}
		}
	})
}

// FuzzCollectiveFrame decodes arbitrary bytes as a process's frame of an all-gather of
// 10 float32 on 3 ranks (process 1 holding ranks 1 and 2), as process 0 reads it, and
// as process 0's answer to it: a frame is read only when every part has the length the
// collective gives, and a short one is an error.
func FuzzCollectiveFrame(f *testing.F) {
	m := message{Kind: driver.AllGather, Type: driver.CollFloat32, Count: 10}
	f.Add(frameBytes(header{Op: &m}, make([]byte, 40), make([]byte, 40)))
	f.Add(frameBytes(header{Op: &m}, make([]byte, 40), make([]byte, 4)))
	f.Add(frameBytes(header{Op: &m}, make([]byte, 120), make([]byte, 120)))
	f.Add(frameBytes(header{Op: &message{Err: "\x1b[31m"}}))
	o := m
	o.Count = 3
	f.Add(frameBytes(header{Op: &o}, make([]byte, 12), make([]byte, 12)))
	f.Add(append(opFrame(m, "40,1099511627776"), 1, 2, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, parts, err := readFrame(bytes.NewReader(data), func(h *header) error { return checkParts(h, m, 3, 1, 1, 2) })
		if err == nil && parts != nil {
			if len(parts) != 2 || len(parts[0]) != 40 || len(parts[1]) != 40 {
				t.Fatalf("gathered parts of %d and %d bytes", len(parts[0]), len(parts[1]))
			}
		}
		if err != nil && !errors.Is(err, errFrame) && !errors.Is(err, errSkipParts) && !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("unexpected error %v", err)
		}
		h, parts, err := readFrame(bytes.NewReader(data), func(h *header) error { return checkResults(h, m, 3, 2) })
		if err == nil {
			if h.Op.Err == "" && (len(parts) != 2 || len(parts[0]) != 120 || len(parts[1]) != 120) {
				t.Fatalf("results of %d parts", len(parts))
			}
			if h.Op.Err != "" && (len(parts) != 0 || !clean(peerText(h.Op.Err))) {
				t.Fatalf("an error with %d parts, shown %q", len(parts), peerText(h.Op.Err))
			}
		}
	})
}

// FuzzPeerText checks that any text a peer sends shows without a control, escape or
// bidi character, valid UTF-8, and bounded.
func FuzzPeerText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\u202eevil\u2066", "\xff\xfe", "a\\x1b", "\x00\a\b\t\n\r", strings.Repeat("\x00", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := peerText(s)
		if !clean(got) {
			t.Fatalf("peerText(%q) = %q", s, got)
		}
		if len(got) > maxPeerText+12 {
			t.Fatalf("peerText of %d bytes gives %d", len(s), len(got))
		}
		if clean(s) && len(s) <= maxPeerText && got != s {
			t.Fatalf("peerText(%q) = %q; a clean text shows as it is", s, got)
		}
	})
}
