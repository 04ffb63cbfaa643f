package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckEnv: PRISM_POOL and PRISM_POOL_LIMIT values Open would refuse are errors that
// name the variable and the value as written; those it accepts, and unset, are not.
func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct{ pool, limit, want string }{
		{"", "", ""},
		{"on", "8GiB", ""},
		{" OFF ", "512M", ""},
		{"0", "", ""},
		{"maybe", "", `engine: PRISM_POOL="maybe": want on or off (1 or 0)`},
		{"yes", "", `PRISM_POOL="yes"`},
		{"", "lots", `engine: PRISM_POOL_LIMIT: "lots" is not a byte count`},
		{"", "-1", `PRISM_POOL_LIMIT: "-1"`},
	} {
		t.Setenv("PRISM_POOL", tc.pool)
		t.Setenv("PRISM_POOL_LIMIT", tc.limit)
		err := CheckEnv()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidArg)) {
			t.Errorf("PRISM_POOL=%q PRISM_POOL_LIMIT=%q: %v; want %q", tc.pool, tc.limit, err, tc.want)
		}
	}
}
