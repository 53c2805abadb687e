package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// Binary is one product binary to put in an image: the package
// services/<Name>, and the TCP ports its container serves (ExposedPorts).
type Binary struct {
	Name  string
	Ports []int
}

// TemplateFile is the generated CloudFormation template, relative to the
// repository's root: its task definitions name the binaries and ports.
const TemplateFile = "deploy/aws/pacer.template.json"

// Deployed reads the binaries the deployment runs from the CloudFormation
// template at path: one per task definition, named by its container, with
// the container ports it maps. The template is generated from the
// binaries' declared settings (make deploy-gen), so the images expose the
// ports the tasks are given.
func Deployed(path string) ([]Binary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				ContainerDefinitions []struct {
					Name         string
					PortMappings []struct{ ContainerPort int }
				}
			}
		}
	}
	if err := json.Unmarshal(b, &tpl); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Binary
	for id, r := range tpl.Resources {
		if r.Type != "AWS::ECS::TaskDefinition" {
			continue
		}
		cs := r.Properties.ContainerDefinitions
		if len(cs) != 1 || cs[0].Name == "" {
			return nil, fmt.Errorf("%s: task definition %s has %d containers; want one, named after its binary", path, id, len(cs))
		}
		bin := Binary{Name: cs[0].Name}
		for _, pm := range cs[0].PortMappings {
			bin.Ports = append(bin.Ports, pm.ContainerPort)
		}
		out = append(out, bin)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no task definition", path)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
