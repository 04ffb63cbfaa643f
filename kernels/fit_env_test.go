package kernels

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestCheckEnv: PRISM_MAX_WORK_GROUP and PRISM_MAX_LOCAL_MEMORY set to anything but a
// positive whole number are errors naming the variable and the value (DeviceLimits,
// which cannot fail, ignores them and says so in the trace); unset or empty is no limit.
func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        string // "" accepts
		limit       int64
	}{
		{EnvMaxWorkGroup, "", "", 0},
		{EnvMaxWorkGroup, "64", "", 64},
		{EnvMaxWorkGroup, " 32 ", "", 32},
		{EnvMaxWorkGroup, "lots", `kernels: PRISM_MAX_WORK_GROUP="lots": want a positive whole number`, 0},
		{EnvMaxWorkGroup, "0", `PRISM_MAX_WORK_GROUP="0"`, 0},
		{EnvMaxWorkGroup, "-8", `PRISM_MAX_WORK_GROUP="-8"`, 0},
		{EnvMaxWorkGroup, "64k", `PRISM_MAX_WORK_GROUP="64k"`, 0},
		{EnvMaxLocalBytes, "16384", "", 16384},
		{EnvMaxLocalBytes, "1.5", `PRISM_MAX_LOCAL_MEMORY="1.5"`, 0},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			t.Setenv(EnvMaxWorkGroup, "")
			t.Setenv(EnvMaxLocalBytes, "")
			t.Setenv(tc.name, tc.value)
			err := CheckEnv()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, engine.ErrInvalidArg)) {
				t.Errorf("CheckEnv: %v; want %q", err, tc.want)
			}
			if got := envLimit(tc.name); got != tc.limit {
				t.Errorf("envLimit = %d, want %d", got, tc.limit)
			}
		})
	}
}
