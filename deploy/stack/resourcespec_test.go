package stack_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
)

// resourceSpec is CloudFormation's resource specification as AWS's CDK
// team publishes it, current with the CloudFormation registry:
// @aws-cdk/aws-service-spec (pinned in tools/standin/package.json,
// installed by `make deps`), whose db.json.gz holds every resource type
// with its properties, attributes and property types.
type resourceSpec struct {
	resources map[string]*specResource // by CloudFormation type
	types     map[string]*specTypeDef  // property types, by the database's $id
}

// specResource is a resource type: its properties and the attributes
// Fn::GetAtt can read.
type specResource struct {
	Type       string              `json:"cloudFormationType"`
	Properties map[string]specProp `json:"properties"`
	Attributes map[string]struct{} `json:"attributes"`
}

// specTypeDef is a property type (a structure of properties).
type specTypeDef struct {
	ID         string              `json:"$id"`
	Name       string              `json:"name"`
	Properties map[string]specProp `json:"properties"`
}

// specProp is a property: its type, whether it must be set, and the types
// it had before (CloudFormation still takes values of those).
type specProp struct {
	Type          specType   `json:"type"`
	Required      bool       `json:"required"`
	PreviousTypes []specType `json:"previousTypes"`
}

// specType is a property's value type: string, integer, number, boolean,
// date-time, json (any object), tag (Key and Value), array or map (of
// Element), ref (a property type, by $id) or union (any of Types).
type specType struct {
	Type      string    `json:"type"`
	Element   *specType `json:"element"`
	Reference *struct {
		ID string `json:"$ref"`
	} `json:"reference"`
	Types         []specType `json:"types"`
	AllowedValues []any      `json:"allowedValues"`
}

// specDB is the part of db.json.gz read here.
type specDB struct {
	Schema struct {
		Resource struct {
			Entities []*specResource `json:"entities"`
		} `json:"resource"`
		TypeDefinition struct {
			Entities []*specTypeDef `json:"entities"`
		} `json:"typeDefinition"`
	} `json:"schema"`
}

var (
	specOnce   sync.Once
	specLoaded *resourceSpec
	specErr    error
)

// loadResourceSpec reads the installed database once per test binary; it
// fails the test, saying how to install it, when `make deps` has not run.
func loadResourceSpec(t *testing.T) *resourceSpec {
	t.Helper()
	specOnce.Do(func() { specLoaded, specErr = readResourceSpec() })
	if specErr != nil {
		t.Fatalf("CloudFormation's resource specification (@aws-cdk/aws-service-spec): %v; run `make deps`", specErr)
	}
	return specLoaded
}

func readResourceSpec() (*resourceSpec, error) {
	path, err := repo.File("tools", "standin", "node_modules", "@aws-cdk", "aws-service-spec", "db.json.gz")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var db specDB
	if err := json.NewDecoder(zr).Decode(&db); err != nil {
		return nil, err
	}
	s := &resourceSpec{resources: map[string]*specResource{}, types: map[string]*specTypeDef{}}
	for _, r := range db.Schema.Resource.Entities {
		s.resources[r.Type] = r
	}
	for _, td := range db.Schema.TypeDefinition.Entities {
		s.types[td.ID] = td
	}
	return s, nil
}
