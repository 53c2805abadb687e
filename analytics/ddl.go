package analytics

import (
	"fmt"
	"regexp"
	"strings"
)

// Column is one column of the DDL: its name, the JSON key it is read from
// (the SerDe's mapping.<name>, else the name) and its DuckDB type.
type Column struct {
	Name, Key, Type string
}

var (
	columnsRE = regexp.MustCompile(`(?s)CREATE EXTERNAL TABLE IF NOT EXISTS \w+ \((.*)\)\s*PARTITIONED BY`)
	mappingRE = regexp.MustCompile(`'mapping\.(\w+)'\s*=\s*'([^']+)'`)
)

// Columns reads the table's columns from the Athena DDL, with their types
// converted from Hive's (string, int, bigint, boolean, double, array<…>,
// struct<…>) to DuckDB's.
func Columns(ddl string) ([]Column, error) {
	m := columnsRE.FindStringSubmatch(ddl)
	if m == nil {
		return nil, fmt.Errorf("analytics: the DDL has no CREATE EXTERNAL TABLE … (…) PARTITIONED BY")
	}
	keys := map[string]string{}
	for _, mm := range mappingRE.FindAllStringSubmatch(ddl, -1) {
		keys[mm[1]] = mm[2]
	}
	var cols []Column
	for _, def := range splitTop(m[1]) {
		def = strings.TrimSpace(def)
		name, typ, ok := strings.Cut(def, " ")
		if !ok {
			return nil, fmt.Errorf("analytics: column %q has no type", def)
		}
		name = strings.Trim(name, "`")
		t, err := duckType(strings.TrimSpace(typ))
		if err != nil {
			return nil, fmt.Errorf("analytics: column %s: %w", name, err)
		}
		key := name
		if k, ok := keys[name]; ok {
			key = k
		}
		cols = append(cols, Column{Name: name, Key: key, Type: t})
	}
	return cols, nil
}

// duckType converts a Hive type to DuckDB's.
func duckType(h string) (string, error) {
	h = strings.Join(strings.Fields(h), "")
	lower := strings.ToLower(h)
	switch lower {
	case "string":
		return "VARCHAR", nil
	case "int":
		return "INTEGER", nil
	case "bigint":
		return "BIGINT", nil
	case "boolean":
		return "BOOLEAN", nil
	case "double":
		return "DOUBLE", nil
	}
	switch {
	case strings.HasPrefix(lower, "array<") && strings.HasSuffix(h, ">"):
		t, err := duckType(h[len("array<") : len(h)-1])
		return t + "[]", err
	case strings.HasPrefix(lower, "struct<") && strings.HasSuffix(h, ">"):
		var fields []string
		for _, f := range splitTop(h[len("struct<") : len(h)-1]) {
			name, typ, ok := strings.Cut(f, ":")
			if !ok {
				return "", fmt.Errorf("struct field %q has no type", f)
			}
			t, err := duckType(typ)
			if err != nil {
				return "", err
			}
			fields = append(fields, fmt.Sprintf("%q %s", name, t))
		}
		return "STRUCT(" + strings.Join(fields, ", ") + ")", nil
	}
	return "", fmt.Errorf("unknown Hive type %q", h)
}

// splitTop splits s at the commas outside <…> and (…).
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}
