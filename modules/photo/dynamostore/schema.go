// Package dynamostore is photo's DynamoDB read layer: the PhotoService-{stage}
// single table with PHOTO and BIB_INDEX items exactly as the seed
// (photoservice-schema.md) fixes them, built on sdk/ddb.
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
// Writes:
//
//   - Store.Create writes one photo in one TransactWriteItems: a put-if-absent
//     of the PHOTO and a put of each BIB_INDEX. Re-posting the ulid cancels
//     the transaction on the PHOTO's condition, whose reason carries the
//     stored photo: nothing is written and the caller gets it back.
//   - Store.CreateBatch writes many photos: the BIB_INDEX items with
//     BatchWriteItem (25 items a call, unprocessed items retried with
//     backoff), then each PHOTO with a put-if-absent. BatchWriteItem has no
//     conditions and no atomicity, so the batch keeps each photo atomic to
//     readers another way: it first BatchGets the PHOTO keys and skips
//     photos that exist (the idempotency check), then writes every
//     BIB_INDEX item and only after all of a photo's index items are in,
//     its PHOTO. The PHOTO is the commit record: the gallery and the
//     photographer search read PHOTO items, and bib search resolves each
//     BIB_INDEX to its PHOTO and skips one whose PHOTO is absent or does
//     not list the bib. A photo reported Failed is not known to be written
//     (its index entries or its PHOTO put failed, or the put's answer was
//     lost): re-post it. The PHOTO's condition makes exactly one of
//     concurrent posts of a ulid win, even when their contents differ: the
//     others report Exists with the stored photo, delete the index entries
//     they wrote for bibs it does not list, and rewrite the ones it shares
//     from it.
package dynamostore

import (
	"github.com/pacerhq/pacer/sdk/ddb"
)

// Entity type names, written to the EntityType attribute.
const (
	PhotoType = "PHOTO"
	BibType   = "BIB_INDEX"
)

// TenantAttribute is the attribute holding each item's organizer.
const TenantAttribute = "orgId"

// Schema is the PhotoService table.
var Schema = ddb.Schema{
	PK:            "PK",
	SK:            "SK",
	TypeAttribute: "EntityType",
	Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"}, // bib search, BIB_INDEX only
		{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"}, // photographer search, PHOTO only
	},
}

// TableName returns the table of a stage: PhotoService-{stage}.
func TableName(stage string) string { return "PhotoService-" + stage }

// Key formats, as the seed writes them.
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
