package main

import (
	"context"
	"strings"
	"testing"
)

// TestEnvUsageErrors: a value of a PRISM_* variable that Prism does not accept
// (PRISM_POOL=maybe, garbage in PRISM_MAX_WORK_GROUP, PRISM_TRACE=false, ...) is a usage
// error, exit code 2, naming the variable and the value, before any device work: the
// device named does not exist, and the variable is the error. Shell completion is not
// refused; accepted values pass.
func TestEnvUsageErrors(t *testing.T) {
	args := []string{"run", "stream/copy/float32", "--device", "nosuch:0", "--size", "1K"}
	for _, tc := range []struct{ name, value, want string }{
		{"PRISM_POOL", "maybe", `engine: PRISM_POOL="maybe": want on or off`},
		{"PRISM_POOL_LIMIT", "lots", `engine: PRISM_POOL_LIMIT: "lots" is not a byte count`},
		{"PRISM_MAX_WORK_GROUP", "lots", `kernels: PRISM_MAX_WORK_GROUP="lots": want a positive whole number`},
		{"PRISM_MAX_WORK_GROUP", "0", `PRISM_MAX_WORK_GROUP="0"`},
		{"PRISM_MAX_LOCAL_MEMORY", "16 KiB", `PRISM_MAX_LOCAL_MEMORY="16 KiB"`},
		{"PRISM_TRACE", "false", `PRISM_TRACE="false": want one of 0, 1, or leave it unset`},
		{"PRISM_DRIVER_STDERR", "yes", `PRISM_DRIVER_STDERR="yes": want one of 0, 1`},
		{"PRISM_OPENCL_DEFAULTS", "maybe", `PRISM_OPENCL_DEFAULTS="maybe": want one of 0, 1, off, on`},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			_, err := execPrism(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v; want %q", err, tc.want)
			}
			if code := run(context.Background(), args); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if got, _ := complete(t, "run", "stream/copy/f"); !contains(got, "stream/copy/float32") {
				t.Errorf("completion refused: %q", got)
			}
		})
	}
	for _, kv := range [][2]string{{"PRISM_POOL", "off"}, {"PRISM_MAX_WORK_GROUP", "64"}, {"PRISM_TRACE", "0"}, {"PRISM_OPENCL_DEFAULTS", "off"}} {
		t.Setenv(kv[0], kv[1])
	}
	if _, err := execPrism(t, args...); err == nil || !strings.Contains(err.Error(), `no device matches "nosuch:0"`) {
		t.Errorf("accepted values: %v; want only the device refused", err)
	}
}
