// Package bench compares Pacer's SDK encode/decode with raw attributevalue
// and with guregu/dynamo. It is its own module so that guregu/dynamo never
// becomes a dependency of the main module. Run, from this directory:
//
//	go test -run '^$' -bench . -benchmem -count 8 | benchstat -col /impl -
package bench
