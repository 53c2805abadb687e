package dynamostore

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// A request stored with the retired failureClass REQUEUEABLE (before
// Pacer returned to the seed's values, docs/contract.md) reads as
// RETRYABLE, through the table and its stream alike (both decode with
// RequestItem.request); the seed's own values read as they are.
func TestRetiredRequeueableReadsAsRetryable(t *testing.T) {
	it := &RequestItem{RequestID: "r", Status: asyncevent.StatusFailedFinal, ResultCode: asyncevent.CodeFailedIngestEnqueue, FailureClass: "REQUEUEABLE"}
	if got := it.request().FailureClass; got != asyncevent.Retryable {
		t.Errorf("stored REQUEUEABLE reads as %q, want RETRYABLE", got)
	}
	for _, c := range append(slices.Clone(asyncevent.FailureClasses), "") {
		it.FailureClass = c
		if got := it.request().FailureClass; got != c {
			t.Errorf("stored %q reads as %q", c, got)
		}
	}
}

// EntityTypes names the entity type of every entity a Store writes, and
// nothing else: an entity added to Store without its type in EntityTypes
// fails here (and docs/contract.md's test then asks for its row).
func TestEntityTypesListsEveryEntity(t *testing.T) {
	s := newStore(ddb.New(nil, ddb.Config{}).Table("t", &Schema))
	named := []string{s.requests.Name(), s.pending.Name(), s.open.Name(), s.lockJobs.Name(), s.locks.Name(),
		s.caps.Name(), s.lines.Name(), s.configs.Name(), s.logs.Name()}
	st := reflect.TypeFor[Store]()
	fields := 0
	for f := range st.Fields() {
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().PkgPath() == "github.com/pacerhq/pacer/sdk/ddb" && strings.HasPrefix(f.Type.Elem().Name(), "Entity[") {
			fields++
		}
	}
	if fields != len(named) {
		t.Fatalf("Store has %d entities, this test names %d: name the new one here and put its type in EntityTypes", fields, len(named))
	}
	slices.Sort(named)
	want := slices.Clone(EntityTypes)
	slices.Sort(want)
	if got := slices.Compact(named); !slices.Equal(got, want) {
		t.Errorf("the Store's entity types are %v, EntityTypes says %v", got, want)
	}
}
