package standin

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// RunTests starts the stand-ins cfg asks for, exports their endpoints into
// the environment (see Stack.Env), runs the package's tests and stops the
// stand-ins. Call it from TestMain:
//
//	func TestMain(m *testing.M) {
//		standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true})
//	}
//
// If a stand-in cannot start, every test in the package fails: the package
// exits non-zero with a message saying what is missing and how to install it.
// Nothing is skipped silently.
func RunTests(m *testing.M, cfg Config) {
	if cfg.Log == nil && os.Getenv("PACER_STANDIN_LOG") != "" {
		cfg.Log = os.Stderr
	}
	stack, err := Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the local stand-ins: %v\n", err)
		fmt.Fprintln(os.Stderr, "      Install them with `make deps` (needs node/npm 20+ and java 17+) and run the tests with `make test`.")
		os.Exit(1)
	}
	stack.Setenv()
	code := m.Run()
	stack.Close()
	os.Exit(code)
}
