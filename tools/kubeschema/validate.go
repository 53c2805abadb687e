package kubeschema

import (
	"fmt"
	"io"
	"strings"

	"github.com/yannh/kubeconform/pkg/validator"
)

// Validate checks the manifests in r (YAML, one or more documents; name
// says where they come from) with kubeconform in strict mode against the
// schemas Build wrote: a field a schema does not have, a value of the
// wrong type, a missing required field, a duplicated key or a kind no
// schema describes is a finding. It returns one line per finding.
func Validate(c Config, name string, r io.Reader) ([]string, error) {
	v, err := validator.New([]string{c.location()}, validator.Opts{Strict: true})
	if err != nil {
		return nil, err
	}
	var findings []string
	for _, res := range v.Validate(name, io.NopCloser(r)) {
		what := name
		if sig, err := res.Resource.Signature(); err == nil {
			what = fmt.Sprintf("%s: %s %s", name, sig.Kind, sig.Name)
		}
		switch res.Status {
		case validator.Invalid:
			for _, e := range res.ValidationErrors {
				findings = append(findings, fmt.Sprintf("%s: %s: %s", what, e.Path, e.Msg))
			}
			if len(res.ValidationErrors) == 0 {
				findings = append(findings, fmt.Sprintf("%s: %v", what, res.Err))
			}
		case validator.Error:
			msg := res.Err.Error()
			if sig, err := res.Resource.Signature(); err == nil && strings.HasPrefix(msg, "could not find schema") {
				k8s, keda := c.versions()
				msg = fmt.Sprintf("could not find schema for %s %s: neither Kubernetes %s nor KEDA %s has that kind and apiVersion", sig.Version, sig.Kind, k8s, keda)
			}
			findings = append(findings, fmt.Sprintf("%s: %s", what, msg))
		}
	}
	return findings, nil
}
