package stack

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The Glue table is read from the Athena DDL itself: every column, the
// partition keys, the SerDe and its mapping, the location and the
// projection properties.
func TestParseDDL(t *testing.T) {
	b, err := os.ReadFile("../../analytics/ddl/events.sql")
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseDDL(string(b))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range g.Columns {
		names = append(names, c[0])
		if strings.ContainsAny(c[1], " \n\t") {
			t.Errorf("column %s: type %q has blanks", c[0], c[1])
		}
	}
	if got := strings.Join(names, ","); got != "version,id,detail_type,source,account,time,region,resources,detail" {
		t.Errorf("columns %s", got)
	}
	if detail := g.Columns[8][1]; !strings.HasPrefix(detail, "struct<schemaVersion:int,id:string,") || !strings.HasSuffix(detail, ",workerId:string>") {
		t.Errorf("detail type %s", detail)
	}
	if len(g.PartitionKeys) != 2 || g.PartitionKeys[0] != [2]string{"dt", "string"} || g.PartitionKeys[1] != [2]string{"hour", "string"} {
		t.Errorf("partition keys %v", g.PartitionKeys)
	}
	if g.Name != "events" || g.SerDe != "org.openx.data.jsonserde.JsonSerDe" || g.SerDeParams["mapping.detail_type"] != "detail-type" ||
		g.Location != "s3://${bucket}/events/" || g.Properties["projection.dt.format"] != "yyyy-MM-dd" || len(g.Properties) != 10 {
		t.Errorf("table %+v", g)
	}
	if _, err := ParseDDL("CREATE TABLE x (a int)"); err == nil {
		t.Error("a DDL of another shape parsed")
	}
}

func TestAlarmPeriods(t *testing.T) {
	for _, c := range []struct{ d, p, want int }{{0, 60, 1}, {600, 60, 10}, {120, 300, 1}, {301, 300, 2}} {
		if got := AlarmPeriods(secs(c.d), secs(c.p)); got != c.want {
			t.Errorf("AlarmPeriods(%ds, %ds) = %d, want %d", c.d, c.p, got, c.want)
		}
	}
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }
