package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// Config is amplidex's configuration file, or a project's. Every key is documented in the
// README; an unknown key is an error naming the key and the file.
type Config struct {
	Roots struct {
		// Bundled lists the bundled collection roots, lowest precedence.
		Bundled []string `toml:"bundled"`
	} `toml:"roots"`
	Schema struct {
		// UnknownKey is the severity of schema/unknown-key: "error" or "warning".
		UnknownKey string `toml:"unknown_key"`
	} `toml:"schema"`
	Watch struct {
		Debounce     Duration `toml:"debounce"`
		MaxWait      Duration `toml:"max_wait"`
		PollInterval Duration `toml:"poll_interval"`
		MaxWatches   int      `toml:"max_watches"`
	} `toml:"watch"`
	Check struct {
		// Select keeps only the diagnostics whose code matches one of
		// these codes or prefixes (every one when empty).
		Select []string `toml:"select"`
		// Ignore drops the diagnostics whose code matches one of these.
		Ignore []string `toml:"ignore"`
		// Severity drops the diagnostics of a lower severity: "error",
		// "warning" (or "warn") or "info".
		Severity string `toml:"severity"`
		// PerPath maps a glob (relative to the project directory) to
		// the codes or prefixes ignored in the files it matches.
		PerPath map[string][]string `toml:"per-path"`
	} `toml:"check"`
	Prepare struct {
		Manifest       string   `toml:"manifest"`
		Manifests      []string `toml:"manifests"`
		AppVersion     string   `toml:"app_version"`
		CacheHome      string   `toml:"cache_home"`
		InstallCommand string   `toml:"install_command"`
	} `toml:"prepare"`
	Daemon struct {
		// Autostart lets query, watch and lsp start the daemon when none
		// runs; true when unset.
		Autostart *bool `toml:"autostart"`
		// ForgetAfter drops a project nobody asked about for that long
		// (30 days when unset; "0s": never).
		ForgetAfter *Duration `toml:"forget_after"`
		// IdleExit stops a daemon a client started once it has had no
		// client for that long (30 minutes when unset; "0": never).
		IdleExit *Duration `toml:"idle_exit"`
	} `toml:"daemon"`

	// path is the file the configuration was read from ("" when none).
	path string
	// set holds the keys the file sets (dotted, below its prefix), each
	// with the line it is written on (1-based; 0 when it cannot tell).
	set map[string]int
}

// Duration is a time.Duration written as "30ms" in TOML.
type Duration struct{ time.Duration }

// String writes a duration as the configuration does: "20ms", "720h".
func (d Duration) String() string { return ShortDuration(d.Duration) }

// ShortDuration is time.Duration's String without trailing zero units:
// "720h", not "720h0m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"0s", "0m"} {
		if strings.HasSuffix(s, "m"+zero) || strings.HasSuffix(s, "h"+zero) {
			s = strings.TrimSuffix(s, zero)
		}
	}
	return s
}

// UnmarshalText reads a duration written with a unit, zero or more.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// parseDuration reads a duration of the configuration, with an error in
// the user's terms.
func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write it with a unit, such as \"30ms\" or \"2s\"", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative; write a duration of zero or more, such as \"30ms\" or \"2s\"", s)
	}
	return v, nil
}

// Kind tells the user's configuration from one a project commits.
type Kind int

// The kinds of configuration file.
const (
	// User is the user's own file (config.toml, or --config): every
	// table.
	User Kind = iota
	// Project is a file a team commits (amplidex.toml,
	// .amplidex.toml, [tool.amplidex] in pyproject.toml): it decides what
	// is reported, never what runs or where the daemon lives.
	Project
)

// Path is the file the configuration was read from ("" when none).
func (c *Config) Path() string { return c.path }

// Line is the line (1-based; 0 when it cannot tell) of the key the file
// sets, dotted ("check.select"), and whether the file sets it.
func (c *Config) Line(key string) (int, bool) {
	line, ok := c.set[key]
	return line, ok
}

// Set lists the keys the file sets, dotted, in order.
func (c *Config) Set() []string { return slices.Sorted(maps.Keys(c.set)) }

// Keys lists every key the configuration knows, dotted: tables and the
// keys in them.
func Keys() []string { return configKeys(reflect.TypeOf(Config{}), nil) }

// projectTables are the tables a project's configuration may set.
var projectTables = []string{"check", "schema"}

// Load reads the user's configuration file at path. A missing file
// is an empty configuration unless the path was given explicitly.
func Load(path string, explicit bool) (*Config, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(path, src, nil, User, "")
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for i, p := range cfg.Roots.Bundled {
		cfg.Roots.Bundled[i] = ExpandPath(p, dir)
	}
	return cfg, nil
}

// Parse decodes the configuration src read from path: the whole
// file, or the table at prefix (tool.amplidex in a pyproject.toml; nil
// and no error when the file has none). Every problem is said in the
// user's terms with the file, the line and column and the key: a key
// amplidex does not know (with the nearest known one), a value of the
// wrong type (with the type wanted), a code or glob that means nothing,
// and, in a project's file, a table that belongs in the user's
// configuration (userPath names that file). A text nested deeper, or
// with longer dotted keys, than syntax.CheckTOMLShape allows is not
// decoded: the error says where.
func Parse(path string, src []byte, prefix []string, kind Kind, userPath string) (*Config, error) {
	var raw map[string]any
	if _, err := syntax.DecodeTOML(src, &raw); err != nil {
		var perr toml.ParseError
		var serr *syntax.TOMLShapeError
		switch {
		case errors.As(err, &serr):
			return nil, fmt.Errorf("%s:%v", path, serr)
		case errors.As(err, &perr):
			return nil, fmt.Errorf("%s:%d:%d: %s", path, perr.Position.Line, perr.Position.Col, perr.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	table := raw
	for i, k := range prefix {
		v, ok := table[k]
		if !ok {
			return nil, nil
		}
		if table, ok = v.(map[string]any); !ok {
			key := strings.Join(prefix[:i+1], ".")
			return nil, fmt.Errorf("%s: %s: want a table, not %s", at(path, src, prefix[:i+1]...), key, describeValue(v))
		}
	}
	c := &configCheck{path: path, src: src, prefix: prefix, kind: kind, userPath: userPath, set: map[string]int{}}
	c.table(table, reflect.TypeOf(Config{}), nil)
	if len(c.problems) > 0 || len(c.unknown) > 0 {
		var lines []string
		if len(c.unknown) > 0 {
			lines = append(lines, unknownKeys(path, src, prefix, c.unknown).Error())
		}
		sort.SliceStable(c.problems, func(i, j int) bool {
			a, b := c.problems[i].pos, c.problems[j].pos
			return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
		})
		for _, p := range c.problems {
			lines = append(lines, p.msg)
		}
		return nil, errors.New(strings.Join(lines, "\n"))
	}
	cfg := &Config{}
	var err error
	if prefix == nil {
		_, err = syntax.DecodeTOML(src, cfg)
	} else {
		var pp struct {
			Tool struct {
				Amplidex *Config `toml:"amplidex"`
			} `toml:"tool"`
		}
		pp.Tool.Amplidex = cfg
		_, err = syntax.DecodeTOML(src, &pp)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.path, cfg.set = path, c.set
	keyAt := func(keys ...string) string { return at(path, src, append(slices.Clone(prefix), keys...)...) }
	switch cfg.Schema.UnknownKey {
	case "", "error", "warning":
	default:
		return nil, fmt.Errorf("%s: schema.unknown_key must be \"error\" or \"warning\", not %q%s", keyAt("schema", "unknown_key"),
			cfg.Schema.UnknownKey, didYouMean(cfg.Schema.UnknownKey, []string{"error", "warning"}))
	}
	if sev := cfg.Check.Severity; sev != "" {
		if _, err := MinRank(sev); err != nil {
			return nil, fmt.Errorf("%s: check.severity: %v", keyAt("check", "severity"), err)
		}
	}
	for _, k := range []struct {
		key  string
		sels []string
	}{{"select", cfg.Check.Select}, {"ignore", cfg.Check.Ignore}} {
		if err := CheckCodes(k.sels); err != nil {
			return nil, fmt.Errorf("%s: check.%s: %v", keyAt("check", k.key), k.key, err)
		}
	}
	for _, glob := range slices.Sorted(maps.Keys(cfg.Check.PerPath)) {
		if _, err := ParseGlob(glob); err != nil {
			return nil, fmt.Errorf("%s: check.per-path: %v", keyAt("check", "per-path", glob), err)
		}
		if err := CheckCodes(cfg.Check.PerPath[glob]); err != nil {
			return nil, fmt.Errorf("%s: check.per-path %q: %v", keyAt("check", "per-path", glob), glob, err)
		}
	}
	return cfg, nil
}

// configProblem is one problem of a configuration file, with where it is.
type configProblem struct {
	pos diag.Position
	msg string
}

// configCheck walks a decoded configuration against the Config struct
// before it is decoded into it, so that every problem is said in the
// user's terms.
type configCheck struct {
	path     string
	src      []byte
	prefix   []string
	kind     Kind
	userPath string
	problems []configProblem
	unknown  []toml.Key
	// set records, for every key the file sets, the line it is on
	// (1-based; 0 when it cannot tell).
	set map[string]int
}

var durationType = reflect.TypeOf(Duration{})

// table checks the keys of t, a table of type typ at keys.
func (c *configCheck) table(t map[string]any, typ reflect.Type, keys []string) {
	fields := map[string]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name != "" && name != "-" {
			fields[name] = f
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		at := append(slices.Clip(keys), k)
		f, ok := fields[k]
		if !ok {
			c.unknown = append(c.unknown, toml.Key(append(slices.Clone(c.prefix), at...)))
			continue
		}
		if c.kind == Project && len(keys) == 0 && !slices.Contains(projectTables, k) {
			c.notForProject(k, t[k])
			continue
		}
		c.value(t[k], f.Type, at)
	}
}

// notForProject reports a table of a project's file that only the user's
// configuration may set, naming each key set in it.
func (c *configCheck) notForProject(table string, v any) {
	var keys [][]string
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			keys = append(keys, []string{table, k})
		}
	} else {
		keys = [][]string{{table}}
	}
	where := "the user's configuration"
	if c.userPath != "" {
		where += " (" + c.userPath + ")"
	}
	for _, k := range keys {
		c.problem(k, "%s: %s: a project's configuration sets only [check] and [schema]; [%s] changes what runs or where the daemon lives, and belongs in %s",
			c.at(k...), strings.Join(k, "."), table, where)
	}
}

// problem records a problem of the key at keys.
func (c *configCheck) problem(keys []string, format string, args ...any) {
	r, _ := syntax.TOMLKeyRange(c.src, append(slices.Clone(c.prefix), keys...)...)
	c.problems = append(c.problems, configProblem{pos: r.Start, msg: fmt.Sprintf(format, args...)})
}

// at is where the key at keys (below the prefix) is written.
func (c *configCheck) at(keys ...string) string {
	return at(c.path, c.src, append(slices.Clone(c.prefix), keys...)...)
}

// value checks v, the value of the key at keys, against the type typ.
func (c *configCheck) value(v any, typ reflect.Type, keys []string) {
	key := strings.Join(keys, ".")
	if r, ok := syntax.TOMLKeyRange(c.src, append(slices.Clone(c.prefix), keys...)...); ok {
		c.set[key] = r.Start.Line + 1
	} else {
		c.set[key] = 0
	}
	bad := func(format string, args ...any) {
		c.problem(keys, "%s: %s: %s", c.at(keys...), key, fmt.Sprintf(format, args...))
	}
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == durationType:
		s, ok := v.(string)
		if !ok {
			bad("%s is not a duration; write it as a string with a unit, such as \"30ms\" or \"2s\"", tomlValue(v))
			return
		}
		if _, err := parseDuration(s); err != nil {
			bad("%v", err)
		}
	case typ.Kind() == reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad("want a table, not %s", describeValue(v))
			return
		}
		delete(c.set, key)
		c.table(m, typ, keys)
	case typ.Kind() == reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad("want a table of globs and lists of codes, such as {\"vendor/**\" = [\"schema/\"]}, not %s", describeValue(v))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if _, ok := stringList(m[k]); !ok {
				at := append(slices.Clip(keys), k)
				c.problem(at, "%s: %s %q: want a list of codes, such as [\"schema/\"], not %s", c.at(at...), key, k, describeValue(m[k]))
			}
		}
	case typ.Kind() == reflect.Slice:
		if _, ok := stringList(v); !ok {
			bad("want a list of strings, such as [\"a\", \"b\"], not %s", describeValue(v))
		}
	case typ.Kind() == reflect.String:
		if _, ok := v.(string); !ok {
			bad("want a string, not %s", describeValue(v))
		}
	case typ.Kind() == reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad("want true or false, not %s", describeValue(v))
		}
	case typ.Kind() == reflect.Int:
		if _, ok := v.(int64); !ok {
			bad("want a whole number, not %s", describeValue(v))
		}
	}
}

// stringList returns v as a list of strings, when it is one.
func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// describeValue names a decoded TOML value in the user's terms: `the
// string "one"`, `the number 3`, `a list holding the number 1`.
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case int64, float64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "a list of tables"
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				return "a list holding " + describeValue(e)
			}
		}
		return "a list of strings"
	}
	return "a date or time"
}

// tomlValue writes a decoded TOML value back as TOML would.
func tomlValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// unknownKeys is the error for keys of the file that amplidex does not
// know (written under prefix): each with its line and column, and the
// nearest known key.
func unknownKeys(path string, src []byte, prefix []string, und []toml.Key) error {
	known := configKeys(reflect.TypeOf(Config{}), prefix)
	type bad struct {
		key string
		pos diag.Position
		ok  bool
	}
	var bads []bad
	for _, k := range und {
		// A table nobody knows lists every key under it too: name the table.
		if slices.ContainsFunc(und, func(p toml.Key) bool { return len(p) < len(k) && slices.Equal(p, k[:len(p)]) }) {
			continue
		}
		r, ok := syntax.TOMLKeyRange(src, k...)
		bads = append(bads, bad{key: k.String(), pos: r.Start, ok: ok})
	}
	sort.SliceStable(bads, func(i, j int) bool {
		if bads[i].pos.Line != bads[j].pos.Line {
			return bads[i].pos.Line < bads[j].pos.Line
		}
		return bads[i].pos.Character < bads[j].pos.Character
	})
	lines := make([]string, len(bads))
	for i, b := range bads {
		where := path
		if b.ok {
			where = fmt.Sprintf("%s:%d:%d", path, b.pos.Line+1, b.pos.Character+1)
		}
		lines[i] = fmt.Sprintf("%s: unknown configuration key %s", where, b.key)
		if near := diag.Suggest(b.key, known); near != "" {
			lines[i] += fmt.Sprintf("; did you mean %s?", near)
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// configKeys lists the dotted keys of the configuration struct t: tables
// and the keys in them.
func configKeys(t reflect.Type, prefix []string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := append(prefix[:len(prefix):len(prefix)], name)
		out = append(out, strings.Join(key, "."))
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration{}) {
			out = append(out, configKeys(f.Type, key)...)
		}
	}
	return out
}

// at names where the key at keyPath is written in the configuration file:
// path:line:col, or the path alone when it cannot tell.
func at(path string, src []byte, keyPath ...string) string {
	if r, ok := syntax.TOMLKeyRange(src, keyPath...); ok {
		return fmt.Sprintf("%s:%d:%d", path, r.Start.Line+1, r.Start.Character+1)
	}
	return path
}

// ExpandPath makes p absolute: "~/" is the home directory, and a relative
// path is taken from the configuration file's directory.
func ExpandPath(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// didYouMean is "; did you mean X?" naming the value of values that word
// most likely misspells, or "" when none is close.
func didYouMean(word string, values []string) string {
	if near := diag.Suggest(word, values); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

// oneOf is values as a sentence: "a, b or c".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
