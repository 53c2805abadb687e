package metrics

// CallOutcome exposes callOutcome to the tests.
var CallOutcome = callOutcome
