package config_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/internal/config"
)

type settings struct {
	Name  string
	N     int
	On    bool
	Every time.Duration
}

func declare(v *settings) *config.Set {
	s := config.NewSet("t")
	s.String(&v.Name, "name", "PACER_T_NAME", "d", "a name")
	s.Int(&v.N, "n", "PACER_T_N", 1, "a count")
	s.Bool(&v.On, "on", "PACER_T_ON", false, "a switch")
	s.Duration(&v.Every, "every", "PACER_T_EVERY", time.Second, "a period")
	return s
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want settings
	}{
		{"defaults", nil, nil, settings{"d", 1, false, time.Second}},
		{"env", map[string]string{"PACER_T_NAME": "x", "PACER_T_N": "7", "PACER_T_ON": "1", "PACER_T_EVERY": "1500ms"}, nil, settings{"x", 7, true, 1500 * time.Millisecond}},
		{"whole seconds", map[string]string{"PACER_T_EVERY": "30"}, nil, settings{"d", 1, false, 30 * time.Second}},
		{"empty env is unset", map[string]string{"PACER_T_N": ""}, nil, settings{"d", 1, false, time.Second}},
		{"flags win over env", map[string]string{"PACER_T_N": "7", "PACER_T_ON": "true"}, []string{"-n=9", "-on=false", "-name", "y"}, settings{"y", 9, false, time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got settings
			if err := declare(&got).Parse(c.args, env(c.env)); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// A malformed value is an error naming its variable or flag, never a silent
// default.
func TestParseRefusesMalformed(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"int env", map[string]string{"PACER_T_N": "seven"}, nil, `PACER_T_N="seven": not a whole number`},
		{"bool env", map[string]string{"PACER_T_ON": "yes please"}, nil, `PACER_T_ON="yes please": not a boolean`},
		{"duration env", map[string]string{"PACER_T_EVERY": "soon"}, nil, `PACER_T_EVERY="soon": not a duration`},
		{"int flag", nil, []string{"-n=x"}, `invalid value "x" for flag -n`},
		{"unknown flag", nil, []string{"-nope"}, "flag provided but not defined: -nope"},
		{"stray argument", nil, []string{"serve"}, `unexpected argument "serve"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got settings
			err := declare(&got).Parse(c.args, env(c.env))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestUsageAndMarkdownListEverySetting(t *testing.T) {
	var v settings
	s := declare(&v)
	var buf bytes.Buffer
	s.PrintUsage(&buf)
	md := s.Markdown()
	for _, st := range s.Settings() {
		for _, want := range []string{"-" + st.Flag, st.Env, st.Help} {
			if !strings.Contains(buf.String(), want) || !strings.Contains(md, want) {
				t.Errorf("usage or markdown lacks %q:\n%s\n%s", want, buf.String(), md)
			}
		}
	}
	if err := s.Parse([]string{"-h"}, env(nil)); !errors.Is(err, config.ErrHelp) {
		t.Errorf("-h: err = %v, want ErrHelp", err)
	}
}

func TestDeclaredTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("declaring PACER_T_N twice did not panic")
		}
	}()
	var v settings
	s := declare(&v)
	s.Int(&v.N, "n2", "PACER_T_N", 0, "again")
}

// An AutoBool setting is auto() by default and for "auto", and what it is
// told otherwise; auto is asked again when "auto" is given.
func TestAutoBool(t *testing.T) {
	for _, c := range []struct {
		name      string
		local     bool // what auto answers
		env       map[string]string
		args      []string
		want      bool
		wantError string
	}{
		{"default, local", true, nil, nil, true, ""},
		{"default, not local", false, nil, nil, false, ""},
		{"env false, local", true, map[string]string{"PACER_T_SETUP": "false"}, nil, false, ""},
		{"env true, not local", false, map[string]string{"PACER_T_SETUP": "1"}, nil, true, ""},
		{"env auto, local", true, map[string]string{"PACER_T_SETUP": " Auto "}, nil, true, ""},
		{"env auto, not local", false, map[string]string{"PACER_T_SETUP": "auto"}, nil, false, ""},
		{"bare flag", false, nil, []string{"-setup"}, true, ""},
		{"flag wins over env", true, map[string]string{"PACER_T_SETUP": "true"}, []string{"-setup=false"}, false, ""},
		{"flag auto", false, map[string]string{"PACER_T_SETUP": "true"}, []string{"-setup=auto"}, false, ""},
		{"malformed env", true, map[string]string{"PACER_T_SETUP": "maybe"}, nil, false, `PACER_T_SETUP="maybe": not true, false or auto`},
		{"malformed flag", true, nil, []string{"-setup=maybe"}, false, `"maybe" for -setup: not true, false or auto`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A value given when parsing replaces the one taken when
			// declaring: declared while auto said the opposite, "auto" must
			// ask again.
			local := c.local
			if c.env != nil || c.args != nil {
				local = !c.local
			}
			var got bool
			s := config.NewSet("t")
			s.AutoBool(&got, "setup", "PACER_T_SETUP", func() bool { return local }, "create what is missing")
			if got != local {
				t.Fatalf("after declaring: %v, want auto's %v", got, local)
			}
			local = c.local
			err := s.Parse(c.args, env(c.env))
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if md := s.Markdown(); !strings.Contains(md, "| `-setup` | `PACER_T_SETUP` | `auto` | create what is missing |") {
				t.Errorf("the default is not shown as auto:\n%s", md)
			}
		})
	}
}
