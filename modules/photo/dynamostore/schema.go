// Package dynamostore is photo's DynamoDB side (its index ports): the
// PhotoService-{stage} single table with its PHOTO and BIB_INDEX items,
// built on sdk/ddb. Key formats and attribute names are fixed: items
// already stored use them.
//
//	PHOTO      PK ORG#{orgId}#EVT#{eventId}  SK PHOTO#{ulid}
//	           GSI2PK PHOTOGRAPHER#{photographerId}  GSI2SK EVT#{eventId}#TIME#{createdAt}
//	BIB_INDEX  PK ORG#{orgId}#EVT#{eventId}  SK BIB#{bib}#PHOTO#{ulid}
//	           GSI1PK EVT#{eventId}#BIB#{bib}  GSI1SK PHOTO#{ulid}
//
// GSI1 is declared on BIB_INDEX only and GSI2 on PHOTO only; the SDK refuses
// any other combination. Every operation goes through a tenant view
// (Table.Scope("orgId", org)), so no call made for one organizer can read or
// write another's items, and cursors are bound to the organizer.
//
//	store := dynamostore.New(db.Table(dynamostore.TableName(stage), &dynamostore.Schema))
//
// Store.Create writes one photo in one transaction; Store.CreateBatch
// writes many with batch writes, each PHOTO last, as its commit record.
// docs/photo.md explains how a batch stays atomic to readers.
package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// Entity type names, written to the EntityType attribute.
const (
	PhotoType = "PHOTO"
	BibType   = "BIB_INDEX"
)

// EntityTypes lists every entity type a Store writes: the seed's two.
var EntityTypes = []string{PhotoType, BibType}

// TenantAttribute is the attribute holding each item's organizer.
const TenantAttribute = "orgId"

// Schema is the PhotoService table, with the seed's NEW_AND_OLD_IMAGES
// stream: every table made from it has one, whoever creates it (the
// deployment's template, Ensure under make run, a test, a user's own
// setup). Ensure does not change an existing table: docs/photo.md says how
// a table made without the stream gets it. Point-in-time recovery and
// encryption with a KMS key are the deployment's (deploy/stack.Table), not
// the schema's: docs/contract.md says why.
var Schema = ddb.Schema{
	PK:            "PK",
	SK:            "SK",
	TypeAttribute: "EntityType",
	Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"}, // bib search, BIB_INDEX only
		{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"}, // photographer search, PHOTO only
	},
	Stream: types.StreamViewTypeNewAndOldImages,
}

// TableName returns the table of a stage: PhotoService-{stage}.
func TableName(stage string) string { return "PhotoService-" + stage }

// Key formats (fixed: items already stored use them).
var (
	EventPK      = ddb.MustFormat("ORG#{orgId}#EVT#{eventId}")
	PhotoSK      = ddb.MustFormat("PHOTO#{ulid}")
	BibSK        = ddb.MustFormat("BIB#{bib}#PHOTO#{ulid}")
	BibGSI1PK    = ddb.MustFormat("EVT#{eventId}#BIB#{bib}")
	BibGSI1SK    = PhotoSK
	PhotogGSI2PK = ddb.MustFormat("PHOTOGRAPHER#{photographerId}")
	PhotogGSI2SK = ddb.MustFormat("EVT#{eventId}#TIME#{createdAt}")
)

// PhotoKey returns a PHOTO item's key.
func PhotoKey(org, event, ulid string) ddb.Key {
	return ddb.Key{PK: EventPK.Build(org, event), SK: PhotoSK.Build(ulid)}
}

// BibKey returns a BIB_INDEX item's key.
func BibKey(org, event, bib, ulid string) ddb.Key {
	return ddb.Key{PK: EventPK.Build(org, event), SK: BibSK.Build(bib, ulid)}
}
