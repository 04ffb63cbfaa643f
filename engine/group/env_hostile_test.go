package group

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestRendezvousFromEnvBounds checks that every variable of a rendezvous is bounded and
// an error names it and the range, before anything is allocated: a world size of
// 99999999999 was a fatal out of memory, a port of 99999 a listen error (exit 1).
func TestRendezvousFromEnvBounds(t *testing.T) {
	vars := []string{"PRISM_RENDEZVOUS", "PRISM_RANK", "PRISM_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
		"SLURM_PROCID", "SLURM_NTASKS", TokenEnv}
	const secret = "s3cret-s3cret-s3cret"
	for _, c := range []struct {
		env  map[string]string
		want []string // in the error; none: accepted
	}{
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "99999999999"},
			[]string{`PRISM_WORLD_SIZE="99999999999"`, "from 1 to 65536"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": fmt.Sprint(1 << 30)},
			[]string{`PRISM_WORLD_SIZE="1073741824"`, "from 1 to 65536"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "99999999999999999999999"},
			[]string{`PRISM_WORLD_SIZE="99999999999999999999999"`}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "2", "PRISM_WORLD_SIZE": "2"},
			[]string{`PRISM_RANK="2"`, "from 0 to 1", "PRISM_WORLD_SIZE=2"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "-1", "PRISM_WORLD_SIZE": "2"},
			[]string{`PRISM_RANK="-1"`}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:99999", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "2"},
			[]string{`PRISM_RENDEZVOUS="tcp://127.0.0.1:99999"`, "from 1 to 65535"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:0", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "2"},
			[]string{"from 1 to 65535"}},
		{map[string]string{"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "70000", "RANK": "0", "WORLD_SIZE": "2"},
			[]string{`MASTER_PORT="70000"`, "from 1 to 65535"}},
		{map[string]string{"MASTER_ADDR": "node7", "MASTER_PORT": "29500", "SLURM_PROCID": "1", "SLURM_NTASKS": "4"},
			[]string{"node7:29500 is not a loopback address and has no token", "set PRISM_RENDEZVOUS_TOKEN"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://10.1.2.3:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "2", TokenEnv: "short"},
			[]string{"PRISM_RENDEZVOUS_TOKEN holds 5 bytes: want at least 16"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "2"},
			[]string{"PRISM_RENDEZVOUS"}},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://10.1.2.3:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "2", TokenEnv: secret}, nil},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "1", "PRISM_WORLD_SIZE": "2"}, nil},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://[::1]:29500", "PRISM_RANK": "1", "PRISM_WORLD_SIZE": "2"}, nil},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://localhost:29500", "PRISM_RANK": "1", "PRISM_WORLD_SIZE": "2"}, nil},
		{map[string]string{"PRISM_RENDEZVOUS": "tcp://10.1.2.3:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "1"}, nil}, // no network
	} {
		t.Run(fmt.Sprint(c.env), func(t *testing.T) {
			for _, v := range vars {
				t.Setenv(v, c.env[v])
			}
			rv, ok, err := RendezvousFromEnv()
			if c.want == nil {
				if err != nil || !ok || rv.Token != c.env[TokenEnv] {
					t.Fatalf("got %v, %v, %v; want it accepted with the token", rv, ok, err)
				}
				if s := fmt.Sprintf("%v %+v %#v %s", rv, rv, rv, rv); rv.Token != "" && strings.Contains(s, rv.Token) {
					t.Errorf("the rendezvous printed shows its token: %s", s)
				}
				return
			}
			if err == nil || !errors.Is(err, engine.ErrInvalidArg) {
				t.Fatalf("got %v, %v, %v; want an invalid argument", rv, ok, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tok := c.env[TokenEnv]; tok != "" && strings.Contains(err.Error(), tok) {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
}

// TestJoinChecksRendezvous checks Join's own refusals, for programs that build a
// Rendezvous: sizes beyond MaxProcesses, too many devices, no token off loopback.
func TestJoinChecksRendezvous(t *testing.T) {
	devs := fakeDevices(t, 1)
	for _, c := range []struct {
		rv   Rendezvous
		want string
	}{
		{Rendezvous{Addr: "127.0.0.1:29500", Rank: 0, Size: 1 << 30}, "want a size from 1 to 65536"},
		{Rendezvous{Addr: "192.0.2.1:29500", Rank: 1, Size: 2}, "not a loopback address and has no token"},
		{Rendezvous{Addr: "127.0.0.1:99999", Rank: 1, Size: 2}, "want a port from 1 to 65535"},
	} {
		_, err := Join(context.Background(), devs, c.rv, Options{})
		if err == nil || !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Join(%v): %v; want %q", c.rv, err, c.want)
		}
	}
	many := make([]*engine.Device, MaxProcessDevices+1)
	if _, err := Join(context.Background(), many, Rendezvous{Addr: "127.0.0.1:29500", Rank: 1, Size: 2}, Options{}); err == nil || !strings.Contains(err.Error(), "1025 devices in one process") {
		t.Errorf("Join of %d devices: %v", len(many), err)
	}
}
