// Package contract holds docs/contract.md to the code. The page lists
// every place Pacer departs from the source documents (the seeds), one row
// each; its test reads the page and fails when a value the page names is
// no longer in the code, or when the code has a value (a status, result
// code, failure class, UI phase or result, event status or type, error
// code, entity type, or an attribute of a seed item) that is neither the
// seeds' nor on the page.
//
// The code's values come from the lists the packages export
// (asyncevent.Statuses, asyncevent.ResultCodes, dynamostore.EntityTypes,
// the item types' dynamodbav tags, ...); the seeds' values are written
// down in the test, each with the seed file that says it. The package has
// no other code.
package contract
