package stack_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A small CloudFormation evaluator, for tests: it deploys a template on
// paper for one set of parameter values, as CloudFormation would resolve
// it. Parameters are checked against their AllowedPattern, the template's
// Rules are asserted, conditions are evaluated, resources and outputs
// whose condition is false are left out, Fn::If picks its branch,
// AWS::NoValue removes what it stands for and Fn::FindInMap reads the
// Mappings. A Ref, Fn::GetAtt, Fn::Sub or DependsOn naming a
// resource that is not created is an error, as CloudFormation refuses it.
// A resource's Ref resolves to "ref:<id>" and its attribute to
// "att:<id>.<attr>", since nothing runs.

// deployed is a template resolved for one set of parameter values.
type deployed struct {
	tpl       map[string]any
	pseudo    map[string]any // the pseudo parameters: pseudo, or values' AWS::Region
	params    map[string]any // string, or []any of strings for list types
	conds     map[string]bool
	condBusy  map[string]bool
	created   map[string]bool
	Resources map[string]deployedResource
	Outputs   map[string]any
}

type deployedResource struct {
	Type       string
	Properties map[string]any
}

// noValue is what AWS::NoValue resolves to before it is removed.
type noValueT struct{}

var noValue = noValueT{}

// readTemplate reads the committed template (numbers as float64).
func readTemplate(t *testing.T) map[string]any { return decodeTemplate(t, false) }

// deploy resolves tpl for values. A parameter with neither a value nor a
// default gets "placeholder-<name>", unchecked: the tests here are about
// the parameters they set. Every stack needs a way to verify tokens (the
// TokenVerification rule): where the template has JwtSecretArn and values
// set neither it nor JwksUrl, JwtSecretArn gets a secret's ARN. A value
// for AWS::Region deploys in that region rather than eu-west-1.
func deploy(tpl map[string]any, values map[string]string) (*deployed, error) {
	pseudos := maps.Clone(pseudo)
	if r, ok := values["AWS::Region"]; ok {
		pseudos["AWS::Region"] = r
		values = maps.Clone(values)
		delete(values, "AWS::Region")
	}
	_, keys := values["JwksUrl"]
	_, secret := values["JwtSecretArn"]
	params, _ := tpl["Parameters"].(map[string]any)
	if _, has := params["JwtSecretArn"]; has && !keys && !secret {
		values = maps.Clone(values)
		if values == nil {
			values = map[string]string{}
		}
		values["JwtSecretArn"] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pacer/test/jwt-secret-AbCdEf"
	}
	d := &deployed{tpl: tpl, pseudo: pseudos, params: map[string]any{}, conds: map[string]bool{}, condBusy: map[string]bool{},
		created: map[string]bool{}, Resources: map[string]deployedResource{}, Outputs: map[string]any{}}
	if err := d.parameters(values); err != nil {
		return nil, err
	}
	if err := d.assertRules(); err != nil {
		return nil, err
	}
	res, _ := tpl["Resources"].(map[string]any)
	for id, r := range res {
		r := r.(map[string]any)
		ok := true
		if c, has := r["Condition"].(string); has {
			var err error
			if ok, err = d.condition(c); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
		}
		d.created[id] = ok
	}
	for _, id := range sortedKeys(res) {
		if !d.created[id] {
			continue
		}
		r := res[id].(map[string]any)
		for _, dep := range asList(r["DependsOn"]) {
			if !d.created[dep.(string)] {
				return nil, fmt.Errorf("%s: DependsOn %s, which is not created", id, dep)
			}
		}
		props, err := d.resolve(r["Properties"])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		pm, _ := props.(map[string]any)
		d.Resources[id] = deployedResource{Type: r["Type"].(string), Properties: pm}
	}
	outs, _ := tpl["Outputs"].(map[string]any)
	for name, o := range outs {
		if c, has := o.(map[string]any)["Condition"].(string); has {
			if ok, err := d.condition(c); err != nil || !ok {
				if err != nil {
					return nil, fmt.Errorf("output %s: %w", name, err)
				}
				continue
			}
		}
		v, err := d.resolve(o.(map[string]any)["Value"])
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", name, err)
		}
		d.Outputs[name] = v
	}
	return d, nil
}

func (d *deployed) parameters(values map[string]string) error {
	params, _ := d.tpl["Parameters"].(map[string]any)
	for name := range values {
		if params[name] == nil {
			return fmt.Errorf("parameter %s is not in the template", name)
		}
	}
	for name, p := range params {
		p := p.(map[string]any)
		v, given := values[name]
		def, hasDef := p["Default"].(string)
		switch {
		case given:
		case hasDef:
			v = def
		default:
			d.params[name] = "placeholder-" + name
			continue
		}
		typ := p["Type"].(string)
		list := typ == "CommaDelimitedList" || strings.HasPrefix(typ, "List<")
		if pat, ok := p["AllowedPattern"].(string); ok {
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				return fmt.Errorf("parameter %s: AllowedPattern: %w", name, err)
			}
			elems := []string{v}
			if list {
				elems = strings.Split(v, ",")
			}
			for _, e := range elems {
				if !re.MatchString(e) {
					return fmt.Errorf("parameter %s: %q does not match its AllowedPattern (%v)", name, e, p["ConstraintDescription"])
				}
			}
		}
		if list {
			var l []any
			for _, e := range strings.Split(v, ",") {
				l = append(l, e)
			}
			d.params[name] = l
		} else {
			d.params[name] = v
		}
	}
	return nil
}

// assertRules asserts the template's Rules: each one whose RuleCondition holds
// must have every assertion true.
func (d *deployed) assertRules() error {
	rules, _ := d.tpl["Rules"].(map[string]any)
	for _, name := range sortedKeys(rules) {
		r := rules[name].(map[string]any)
		if c, ok := r["RuleCondition"]; ok {
			holds, err := d.boolean(c)
			if err != nil {
				return fmt.Errorf("rule %s: %w", name, err)
			}
			if !holds {
				continue
			}
		}
		for _, a := range asList(r["Assertions"]) {
			a := a.(map[string]any)
			ok, err := d.boolean(a["Assert"])
			if err != nil {
				return fmt.Errorf("rule %s: %w", name, err)
			}
			if !ok {
				return fmt.Errorf("rule %s: %v", name, a["AssertDescription"])
			}
		}
	}
	return nil
}

func (d *deployed) condition(name string) (bool, error) {
	if v, ok := d.conds[name]; ok {
		return v, nil
	}
	conds, _ := d.tpl["Conditions"].(map[string]any)
	c, ok := conds[name]
	if !ok {
		return false, fmt.Errorf("condition %s is not defined", name)
	}
	if d.condBusy[name] {
		return false, fmt.Errorf("condition %s refers to itself", name)
	}
	d.condBusy[name] = true
	v, err := d.boolean(c)
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	d.conds[name] = v
	return v, nil
}

// boolean evaluates a condition function.
func (d *deployed) boolean(v any) (bool, error) {
	fn, arg, ok := intrinsic(v)
	if !ok {
		return false, fmt.Errorf("%v is not a condition", v)
	}
	args := asList(arg)
	switch fn {
	case "Condition":
		return d.condition(arg.(string))
	case "Fn::Equals":
		if len(args) != 2 {
			return false, fmt.Errorf("Fn::Equals takes 2 values, not %d", len(args))
		}
		a, err := d.resolve(args[0])
		if err != nil {
			return false, err
		}
		b, err := d.resolve(args[1])
		if err != nil {
			return false, err
		}
		return reflect.DeepEqual(a, b), nil
	case "Fn::Not":
		if len(args) != 1 {
			return false, fmt.Errorf("Fn::Not takes 1 condition, not %d", len(args))
		}
		x, err := d.boolean(args[0])
		return !x, err
	case "Fn::And", "Fn::Or":
		and := fn == "Fn::And"
		for _, a := range args {
			x, err := d.boolean(a)
			if err != nil {
				return false, err
			}
			if x != and {
				return x, nil
			}
		}
		return and, nil
	}
	return false, fmt.Errorf("condition function %s is not supported here", fn)
}

var pseudo = map[string]any{
	"AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
	"AWS::StackName": "pacer-test", "AWS::StackId": "stack-id", "AWS::URLSuffix": "amazonaws.com",
}

// resolve resolves v's intrinsic functions; noValue is removed from maps
// and lists.
func (d *deployed) resolve(v any) (any, error) {
	if fn, arg, ok := intrinsic(v); ok {
		return d.function(fn, arg)
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			r, err := d.resolve(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if r != noValue {
				out[k] = r
			}
		}
		return out, nil
	case []any:
		out := []any{}
		for i, x := range v {
			r, err := d.resolve(x)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			if r != noValue {
				out = append(out, r)
			}
		}
		return out, nil
	}
	return v, nil
}

func (d *deployed) function(fn string, arg any) (any, error) {
	args := asList(arg)
	switch fn {
	case "Ref":
		return d.ref(arg.(string))
	case "Fn::GetAtt":
		id, attr := args[0].(string), args[1].(string)
		if !d.created[id] {
			return nil, fmt.Errorf("Fn::GetAtt %s.%s: %s is not created", id, attr, id)
		}
		return "att:" + id + "." + attr, nil
	case "Fn::If":
		ok, err := d.condition(args[0].(string))
		if err != nil {
			return nil, err
		}
		if ok {
			return d.resolve(args[1])
		}
		return d.resolve(args[2])
	case "Fn::Sub":
		return d.sub(arg)
	case "Fn::Join":
		parts, err := d.strings(args[1])
		if err != nil {
			return nil, fmt.Errorf("Fn::Join: %w", err)
		}
		return strings.Join(parts, args[0].(string)), nil
	case "Fn::Split":
		s, err := d.resolve(args[1])
		if err != nil {
			return nil, err
		}
		str, ok := s.(string)
		if !ok {
			return nil, fmt.Errorf("Fn::Split of %v, not a string", s)
		}
		var out []any
		for _, p := range strings.Split(str, args[0].(string)) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::FindInMap":
		var keys []string
		for _, a := range args {
			r, err := d.resolve(a)
			if err != nil {
				return nil, err
			}
			k, ok := r.(string)
			if !ok {
				return nil, fmt.Errorf("Fn::FindInMap key %v is not a string", r)
			}
			keys = append(keys, k)
		}
		mappings, _ := d.tpl["Mappings"].(map[string]any)
		var v any = mappings
		for _, k := range keys {
			m, _ := v.(map[string]any)
			if v = m[k]; v == nil {
				return nil, fmt.Errorf("Fn::FindInMap %v: no %s", keys, k)
			}
		}
		return v, nil
	case "Fn::Select":
		l, err := d.resolve(args[1])
		if err != nil {
			return nil, err
		}
		list, _ := l.([]any)
		i, ok := args[0].(float64)
		if !ok || int(i) < 0 || int(i) >= len(list) {
			return nil, fmt.Errorf("Fn::Select %v of a list of %d", args[0], len(list))
		}
		return list[int(i)], nil
	}
	return nil, fmt.Errorf("%s is not supported here", fn)
}

func (d *deployed) ref(name string) (any, error) {
	if name == "AWS::NoValue" {
		return noValue, nil
	}
	if v, ok := d.pseudo[name]; ok {
		return v, nil
	}
	if v, ok := d.params[name]; ok {
		return v, nil
	}
	if created, ok := d.created[name]; ok {
		if !created {
			return nil, fmt.Errorf("Ref %s, which is not created", name)
		}
		return "ref:" + name, nil
	}
	return nil, fmt.Errorf("Ref %s names nothing", name)
}

var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

// sub is Fn::Sub with a string: ${Param}, ${Resource}, ${Resource.Attr},
// ${AWS::…}; ${!x} stands for ${x}.
func (d *deployed) sub(arg any) (any, error) {
	s, ok := arg.(string)
	if !ok {
		return nil, fmt.Errorf("Fn::Sub with variables is not supported here")
	}
	var err error
	out := subVar.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") {
			return "${" + name[1:] + "}"
		}
		var v any
		var e error
		if id, attr, isAtt := strings.Cut(name, "."); isAtt {
			v, e = d.function("Fn::GetAtt", []any{id, attr})
		} else {
			v, e = d.ref(name)
		}
		str, isStr := v.(string)
		if e == nil && !isStr {
			e = fmt.Errorf("Fn::Sub ${%s} is not a string", name)
		}
		if e != nil && err == nil {
			err = e
		}
		return str
	})
	return out, err
}

func (d *deployed) strings(v any) ([]string, error) {
	r, err := d.resolve(v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range asList(r) {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", x)
		}
		out = append(out, s)
	}
	return out, nil
}

// intrinsic reports whether v is a one-key map calling a function (Ref,
// Condition or Fn::…).
func intrinsic(v any) (fn string, arg any, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap || len(m) != 1 {
		return "", nil, false
	}
	for k, a := range m {
		if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
			return k, a, true
		}
	}
	return "", nil, false
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The evaluator itself: conditions pick branches and resources, NoValue
// disappears, and what CloudFormation refuses is an error.
func TestEvaluator(t *testing.T) {
	tpl := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{
		  "Parameters": {"Name": {"Type": "String", "Default": "", "AllowedPattern": "^[a-z]*$"}},
		  "Rules": {"R": {"RuleCondition": {"Fn::Equals": [{"Ref": "Name"}, "no"]},
		                  "Assertions": [{"Assert": {"Fn::Equals": ["a", "b"]}, "AssertDescription": "no is refused"}]}},
		  "Conditions": {"Named": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Name"}, ""]}]},
		                 "Second": {"Fn::Not": [{"Fn::Equals": [{"Fn::Select": [1, {"Fn::Split": [",", {"Fn::Sub": "${Name},,"}]}]}, ""]}]}},
		  "Resources": {
		    "A": {"Type": "T", "Condition": "Named", "Properties": {"N": {"Fn::Sub": "x-${Name}"}}},
		    "B": {"Type": "T", "Properties": {"L": ["k", {"Fn::If": ["Named", {"Ref": "A"}, {"Ref": "AWS::NoValue"}]}],
		                                      "M": {"Fn::If": ["Second", 1, {"Ref": "AWS::NoValue"}]},
		                                      "R": {"Fn::FindInMap": ["Regions", {"Ref": "AWS::Region"}, "Id"]}}}
		  },
		  "Mappings": {"Regions": {"eu-west-1": {"Id": "r1"}}},
		  "Outputs": {"O": {"Value": {"Fn::Join": ["", ["u-", {"Fn::GetAtt": ["B", "Arn"]}]]}},
		              "OA": {"Condition": "Named", "Value": {"Ref": "A"}}}
		}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	d, err := deploy(tpl(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Resources["A"]; ok {
		t.Error("A is created with its condition false")
	}
	if got := d.Resources["B"].Properties; !reflect.DeepEqual(got, map[string]any{"L": []any{"k"}, "R": "r1"}) {
		t.Errorf("B without a name: %v", got)
	}
	if d.Outputs["O"] != "u-att:B.Arn" {
		t.Errorf("output O: %v", d.Outputs["O"])
	}
	if _, ok := d.Outputs["OA"]; ok {
		t.Error("output OA is there with its condition false")
	}
	d, err = deploy(tpl(), map[string]string{"Name": "ab"})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Resources["B"].Properties["L"]; !reflect.DeepEqual(got, []any{"k", "ref:A"}) {
		t.Errorf("B with a name: %v", got)
	}
	if got := d.Resources["A"].Properties["N"]; got != "x-ab" {
		t.Errorf("A with a name: %v", got)
	}
	if got := d.Outputs["OA"]; got != "ref:A" {
		t.Errorf("output OA with a name: %v", got)
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		values map[string]string
		want   string
	}{
		"pattern": {values: map[string]string{"Name": "AB"}, want: "AllowedPattern"},
		"rule":    {values: map[string]string{"Name": "no"}, want: "no is refused"},
		"unknown": {values: map[string]string{"Other": "x"}, want: "not in the template"},
		"ref to skipped": {mutate: func(m map[string]any) {
			delete(resourceOf(m, "B")["Properties"].(map[string]any), "M")
			resourceOf(m, "B")["Properties"].(map[string]any)["L"] = map[string]any{"Ref": "A"}
		}, want: "Ref A, which is not created"},
		"depends on": {mutate: func(m map[string]any) { resourceOf(m, "B")["DependsOn"] = []any{"A"} }, want: "DependsOn A"},
		"select past end": {mutate: func(m map[string]any) {
			resourceOf(m, "B")["Properties"].(map[string]any)["S"] = map[string]any{"Fn::Select": []any{3.0, []any{"a"}}}
		}, want: "Fn::Select"},
		"no such mapping key": {mutate: func(m map[string]any) {
			m["Mappings"] = map[string]any{"Regions": map[string]any{"us-east-1": map[string]any{"Id": "r2"}}}
		}, want: "Fn::FindInMap [Regions eu-west-1 Id]: no eu-west-1"},
		"unknown function": {mutate: func(m map[string]any) {
			resourceOf(m, "B")["Properties"].(map[string]any)["S"] = map[string]any{"Fn::GetAZs": ""}
		}, want: "not supported"},
	} {
		m := tpl()
		if c.mutate != nil {
			c.mutate(m)
		}
		if _, err := deploy(m, c.values); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}

func resourceOf(tpl map[string]any, id string) map[string]any {
	r, _ := tpl["Resources"].(map[string]any)[id].(map[string]any)
	return r
}
