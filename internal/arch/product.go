package arch

import (
	"path"
	"strings"
)

// NotProduct says why a package (an import path) that a product binary
// links is not product code ("" when it is): a test kit, a stand-in, the capacity simulator, the benchmarks' AWS
// fixture or dev-stack code. The product binaries are the ones the deployment
// generator deploys (TestProductBinariesLinkNoTestOrDevCode reads them
// from deploy/k8s, so a new one is covered).
func NotProduct(importPath string) string {
	pkg, ours := strings.CutPrefix(importPath, Module+"/")
	switch {
	case !ours:
		if pkg == "testing" || strings.HasPrefix(pkg, "testing/") || pkg == "net/http/httptest" {
			return "a test kit"
		}
		return "" // the standard library's or another module's product code
	case strings.HasSuffix(path.Base(pkg), "test"), pkg == "internal/testbin", pkg == "services/internal/testkit/proctest":
		return "a test kit"
	case pkg == "sdk/standin" || strings.HasPrefix(pkg, "sdk/standin/"):
		return "the local stand-ins"
	case pkg == "internal/awsfixture":
		return "the benchmarks' AWS fixture"
	case pkg == "sdk/ddb/capacity":
		return "the DynamoDB capacity simulator (test-time measurement)"
	case pkg == "services/dev" || strings.HasPrefix(pkg, "services/dev/"):
		return "dev-stack code (make run)"
	}
	return ""
}
