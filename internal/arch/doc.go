// Package arch holds Pacer's import rules and the test that enforces them
// over `go list`, so a change that breaks the architecture fails `make test`
// and `make verify` instead of waiting for a review.
//
// The rules (see rules in rule.go for the exact list):
//
//   - A domain root (modules/<m>) imports the standard library and
//     github.com/oklog/ulid/v2 only; adapters beside it own the vendors.
//   - No package of a module imports another module, a service, Huma or
//     net/http.
//   - sdk/... imports no module and no service.
//   - services/internal/<svc> imports no other services/internal package
//     except a shared kit (Kits); test kits sit together under
//     services/internal/testkit.
//   - A generic kit imports no module: only a module's own kit
//     (ModuleKits: asynceventbackend, photobackend) may, so each domain's
//     metrics and wiring live beside its services.
//   - The worker binary links no HTTP API framework, JWT or Postgres code.
//   - No deployed binary (the containers of deploy/k8s) links a test kit, a
//     stand-in, the capacity simulator, the benchmarks' AWS fixture or
//     dev-stack code (NotProduct).
//   - Every deployed binary links the CA roots and time zones it carries
//     (Fallback: time/tzdata, golang.org/x/crypto/x509roots/fallback), and
//     only binaries (services/<bin>) import them.
//
// And two size rules over each domain root's source (size.go): no type
// has more than MaxMethods methods (split it by role), and every port
// interface in port.go is consumed by something in the package.
package arch
