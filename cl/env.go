//go:build !noopencl

package cl

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// EnvNoDefaults is the environment variable that turns the OpenCL drivers' defaults off:
// set to 0 (or off, false, no), the backend leaves every driver variable as the process
// has it.
const EnvNoDefaults = "PRISM_OPENCL_DEFAULTS"

// envDefault is one driver variable the backend sets before the first probe, when the
// user has not set it.
type envDefault struct {
	name  string
	value func() string // "" leaves the variable unset
	why   string
}

// envDefaults are the drivers' variables Prism sets, in the order they are applied.
var envDefaults = []envDefault{
	{"POCL_WORK_GROUP_SPECIALIZATION", func() string { return "0" },
		"PoCL compiles a program once, not again for every work-group size"},
	{"POCL_CACHE_DIR", poclCacheDir,
		"PoCL's compiled programs beside Prism's own cache"},
	{"RUSTICL_ENABLE", func() string { return "llvmpipe" },
		"Mesa's Rusticl lists its CPU device (llvmpipe); unset, it lists none"},
}

// poclCacheDir is where PoCL keeps compiled programs by Prism's default: pocl under
// Prism's cache directory ($PRISM_CACHE_DIR, else the user's cache directory's prism,
// as the CUDA backend's cache), or "" when neither is known.
func poclCacheDir() string {
	if d := os.Getenv("PRISM_CACHE_DIR"); d != "" {
		return filepath.Join(d, "pocl")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "prism", "pocl")
}

var envOnce sync.Once

// applyEnvDefaults sets the drivers' variables of envDefaults that the user has not set
// (a variable set to the empty string counts as set), once per process, unless
// PRISM_OPENCL_DEFAULTS turns them off. It runs before the ICD loader is first asked
// for platforms, because the drivers read their variables when they load. setenv is the
// C library's, so the drivers see the values; it runs under the probe's lock, before this
// package makes any OpenCL call.
func applyEnvDefaults() {
	envOnce.Do(func() {
		if off(os.Getenv(EnvNoDefaults)) {
			tracef("%s=%s: the OpenCL drivers' variables are left as they are", EnvNoDefaults, os.Getenv(EnvNoDefaults))
			return
		}
		for _, d := range envDefaults {
			if v, set := os.LookupEnv(d.name); set {
				tracef("%s=%s, as set by the user", d.name, v)
				continue
			}
			v := d.value()
			if v == "" {
				continue
			}
			if err := os.Setenv(d.name, v); err != nil {
				tracef("cannot set %s=%s: %v", d.name, v, err)
				continue
			}
			tracef("set %s=%s (%s; set it yourself, or %s=0, to change that)", d.name, v, d.why, EnvNoDefaults)
		}
	})
}

// on reports whether an environment value turns something on.
func on(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "on", "true", "yes":
		return true
	}
	return false
}

// off reports whether an environment value turns a default off.
func off(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "off", "false", "no":
		return true
	}
	return false
}

// noDeviceHint says what may make a platform that lists no device list one, or "".
// Mesa ships two OpenCL platforms: Rusticl, which lists only the Gallium drivers that
// RUSTICL_ENABLE names (llvmpipe is the CPU), and Clover, which has no CPU driver.
func noDeviceHint(platform string) string {
	switch strings.ToLower(platform) {
	case "rusticl":
		if v, set := os.LookupEnv("RUSTICL_ENABLE"); set {
			return "RUSTICL_ENABLE=" + v + " enables none of its drivers; RUSTICL_ENABLE=llvmpipe lists the CPU"
		}
		return "set RUSTICL_ENABLE=llvmpipe to list the CPU through it"
	case "clover":
		return "Mesa's Clover has no CPU device; Mesa's Rusticl lists the CPU with RUSTICL_ENABLE=llvmpipe"
	}
	return ""
}
