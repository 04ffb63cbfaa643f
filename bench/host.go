package bench

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// resultEnvPrefixes are the prefixes of the environment variables that change what a run
// measures: Prism's own settings, the OpenCL drivers' (PoCL, Rusticl and the Mesa
// llvmpipe device under it, the ICD loader), CUDA's and its libraries', thread pools' and
// the Go runtime's.
var resultEnvPrefixes = []string{
	"PRISM_", "POCL_", "RUSTICL_", "MESA_", "LP_", "GALLIUM_", "OCL_ICD_", "OPENCL_",
	"CUDA_", "CUBLAS_", "CUBLASLT_", "CUFFT_", "NCCL_", "NVIDIA_TF32_OVERRIDE",
	"OMP_", "MKL_", "OPENBLAS_", "GOMAXPROCS", "GOGC", "GODEBUG", "LD_LIBRARY_PATH",
}

// notResultEnv are names among those prefixes that change where a run goes, not what it
// measures (the results store, the compiled-kernel caches: a cold cache changes the first
// build's time, which Overheads records, not a case's), or that may hold a secret (a
// PostgreSQL store's password).
var notResultEnv = []string{"PRISM_STORE", "PRISM_CACHE_DIR", "POCL_CACHE_DIR", "MESA_SHADER_CACHE_DIR", "CUDA_CACHE_PATH"}

// ResultEnv returns the variables of the process's environment that may change a run's
// results (PoCL's, Rusticl's, CUDA's, OpenMP's, Prism's own, ...), by name; nil when none is
// set. A name that speaks of a password, a secret or a token is left out.
func ResultEnv() map[string]string {
	var env map[string]string
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !resultEnvName(k) {
			continue
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	return env
}

// resultEnvName reports whether the variable k belongs in ResultEnv.
func resultEnvName(k string) bool {
	up := strings.ToUpper(k)
	for _, s := range []string{"PASSWORD", "SECRET", "TOKEN"} {
		if strings.Contains(up, s) {
			return false
		}
	}
	for _, n := range notResultEnv {
		if k == n {
			return false
		}
	}
	for _, p := range resultEnvPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// HostCPU returns the host's CPU model as the operating system names it (the first
// "model name" of /proc/cpuinfo on Linux), or "" where it cannot be read.
func HostCPU() string {
	if runtime.GOOS != "linux" {
		return ""
	}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// x86 says "model name", arm64 kernels "Model" or nothing; "Hardware" on older arm.
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Model", "Hardware":
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return ""
}
