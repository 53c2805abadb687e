package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Setting is one declared setting of a binary.
type Setting struct {
	Flag    string // flag name, without the dash
	Env     string // environment variable
	Default string // the default, as text
	Help    string
	value   flag.Value
}

// Set holds a binary's settings. Declare each once with String, Int, Bool,
// AutoBool or Duration, then Parse.
type Set struct {
	name     string
	fs       *flag.FlagSet
	settings []*Setting
}

// NewSet returns an empty Set for the binary name.
func NewSet(name string) *Set {
	s := &Set{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	s.fs.Usage = func() { s.PrintUsage(s.fs.Output()) }
	return s
}

// String declares a text setting stored in p.
func (s *Set) String(p *string, flagName, env, def, help string) {
	*p = def
	s.add(flagName, env, def, help, (*stringValue)(p))
}

// Int declares an integer setting stored in p.
func (s *Set) Int(p *int, flagName, env string, def int, help string) {
	*p = def
	s.add(flagName, env, strconv.Itoa(def), help, (*intValue)(p))
}

// Bool declares a boolean setting stored in p ("1", "true", "0", "false", ...).
func (s *Set) Bool(p *bool, flagName, env string, def bool, help string) {
	*p = def
	s.add(flagName, env, strconv.FormatBool(def), help, (*boolValue)(p))
}

// Duration declares a duration setting stored in p: a Go duration ("30s",
// "1m30s") or whole seconds ("30").
func (s *Set) Duration(p *time.Duration, flagName, env string, def time.Duration, help string) {
	*p = def
	s.add(flagName, env, def.String(), help, (*durationValue)(p))
}

// AutoBool declares a boolean setting stored in p that also takes "auto",
// its default: then auto decides, called when the setting is declared and
// again when "auto" is given. For example, a binary's setup switch is
// declared with awsclient.Local as auto, so that it creates its resources
// against the local stand-ins and only checks them elsewhere. help should
// say what auto means.
func (s *Set) AutoBool(p *bool, flagName, env string, auto func() bool, help string) {
	*p = auto()
	s.add(flagName, env, "auto", help, &autoBoolValue{p: p, auto: auto})
}

// Var declares a setting of any flag.Value; def is the default as shown
// (v already holds it).
func (s *Set) Var(v flag.Value, flagName, env, def, help string) {
	s.add(flagName, env, def, help, v)
}

func (s *Set) add(flagName, env, def, help string, v flag.Value) {
	for _, o := range s.settings {
		if o.Flag == flagName || o.Env == env {
			panic(fmt.Sprintf("config: %s declared twice (-%s, %s)", s.name, flagName, env))
		}
	}
	st := &Setting{Flag: flagName, Env: env, Default: def, Help: help, value: v}
	s.settings = append(s.settings, st)
	s.fs.Var(v, flagName, help)
}

// Settings lists the declared settings in declaration order.
func (s *Set) Settings() []Setting {
	out := make([]Setting, len(s.settings))
	for i, st := range s.settings {
		out[i] = *st
	}
	return out
}

// ErrHelp is returned by Parse when -h or -help was asked for; the usage
// has been printed.
var ErrHelp = flag.ErrHelp

// Parse sets every setting from its environment variable (read with getenv;
// unset or empty means the default), then from args (flags win). A
// malformed value is an error naming its variable or flag. Arguments left
// after the flags are an error too.
func (s *Set) Parse(args []string, getenv func(string) string) error {
	var errs []error
	for _, st := range s.settings {
		if v := getenv(st.Env); v != "" {
			if err := st.value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %v", st.Env, v, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.fs.SetOutput(io.Discard)
	err := s.fs.Parse(args)
	s.fs.SetOutput(nil)
	if errors.Is(err, flag.ErrHelp) {
		s.PrintUsage(s.fs.Output())
		return ErrHelp
	}
	if err != nil {
		return fmt.Errorf("%s: %w (-h lists the settings)", s.name, err)
	}
	if rest := s.fs.Args(); len(rest) > 0 {
		return fmt.Errorf("%s: unexpected argument %q (-h lists the settings)", s.name, rest[0])
	}
	return nil
}

// PrintUsage writes every setting as `-flag (ENV, default D): help`.
func (s *Set) PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage of %s (a flag wins over its environment variable):\n", s.name)
	for _, st := range s.settings {
		fmt.Fprintf(w, "  -%s  (%s, default %s)\n    \t%s\n", st.Flag, st.Env, orNone(st.Default), st.Help)
	}
}

// Markdown renders the settings as a Markdown table (flag, variable,
// default, meaning), as docs/settings.md shows them.
func (s *Set) Markdown() string {
	var b strings.Builder
	b.WriteString("| Flag | Environment | Default | Meaning |\n|---|---|---|---|\n")
	for _, st := range s.settings {
		fmt.Fprintf(&b, "| `-%s` | `%s` | %s | %s |\n", st.Flag, st.Env, mdDefault(st.Default), strings.ReplaceAll(st.Help, "|", `\|`))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func mdDefault(s string) string {
	if s == "" {
		return "(none)"
	}
	return "`" + s + "`"
}

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a whole number")
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a boolean (true, false, 1, 0)")
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// autoBoolValue is a bool that also takes "auto": the value of auto().
type autoBoolValue struct {
	p    *bool
	auto func() bool
}

func (v *autoBoolValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "auto") {
		*v.p = v.auto()
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("not true, false or auto")
	}
	*v.p = b
	return nil
}

func (v *autoBoolValue) String() string {
	if v.p == nil { // the zero value flag.PrintDefaults makes
		return "false"
	}
	return strconv.FormatBool(*v.p)
}
func (v *autoBoolValue) IsBoolFlag() bool { return true }

type durationValue time.Duration

func (v *durationValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		*v = durationValue(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New(`not a duration ("30s", "1m30s", or whole seconds)`)
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string { return time.Duration(*v).String() }

// FromEnv declares settings on a new Set with declare and sets them from the
// environment alone (no flags): for a program that runs a service
// in-process, such as the dev runner or a test.
func FromEnv(name string, declare func(*Set)) error {
	s := NewSet(name)
	declare(s)
	return s.Parse(nil, os.Getenv)
}
