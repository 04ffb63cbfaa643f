package cuda

import (
	"fmt"
	"os"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// tracef prints a trace line on stderr when PRISM_TRACE asks for it (engine.Tracing).
func tracef(format string, args ...any) {
	if engine.Tracing() {
		fmt.Fprintf(os.Stderr, "prism: cuda: "+strings.TrimSuffix(format, "\n")+"\n", args...)
	}
}
