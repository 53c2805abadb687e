package stack

import (
	"fmt"
	"regexp"
	"strings"
)

// GlueTable is the Athena DDL (analytics/ddl/events.sql) in Glue's terms.
type GlueTable struct {
	Name          string
	Columns       [][2]string // name, Hive type without blanks
	PartitionKeys [][2]string
	SerDe         string
	SerDeParams   map[string]string
	Location      string
	Properties    map[string]string
}

var (
	ddlTableRE = regexp.MustCompile(`(?s)CREATE EXTERNAL TABLE IF NOT EXISTS (\w+) \((.*)\)\s*PARTITIONED BY \((.*?)\)\s*ROW FORMAT SERDE '([^']+)'\s*WITH SERDEPROPERTIES \((.*?)\)\s*LOCATION '([^']+)'\s*TBLPROPERTIES \((.*)\);`)
	ddlPropRE  = regexp.MustCompile(`'([^']+)'\s*=\s*'([^']*)'`)
	ddlLineRE  = regexp.MustCompile(`(?m)^--.*$`)
)

// ParseDDL reads the CREATE EXTERNAL TABLE statement of the analytics DDL.
func ParseDDL(ddl string) (GlueTable, error) {
	m := ddlTableRE.FindStringSubmatch(ddlLineRE.ReplaceAllString(ddl, ""))
	if m == nil {
		return GlueTable{}, fmt.Errorf("stack: the DDL is not CREATE EXTERNAL TABLE … PARTITIONED BY … ROW FORMAT SERDE … WITH SERDEPROPERTIES … LOCATION … TBLPROPERTIES …")
	}
	g := GlueTable{Name: m[1], SerDe: m[4], Location: m[6], SerDeParams: props(m[5]), Properties: props(m[7])}
	var err error
	if g.Columns, err = columns(m[2]); err != nil {
		return g, err
	}
	g.PartitionKeys, err = columns(m[3])
	return g, err
}

func props(s string) map[string]string {
	out := map[string]string{}
	for _, p := range ddlPropRE.FindAllStringSubmatch(s, -1) {
		out[p[1]] = p[2]
	}
	return out
}

func columns(s string) ([][2]string, error) {
	var out [][2]string
	depth, start := 0, 0
	flush := func(end int) error {
		def := strings.TrimSpace(s[start:end])
		if def == "" {
			return nil
		}
		name, typ, ok := strings.Cut(def, " ")
		if !ok {
			return fmt.Errorf("stack: DDL column %q has no type", def)
		}
		out = append(out, [2]string{strings.Trim(name, "`"), strings.Join(strings.Fields(typ), "")})
		return nil
	}
	for i, c := range s {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				if err := flush(i); err != nil {
					return nil, err
				}
				start = i + 1
			}
		}
	}
	return out, flush(len(s))
}
