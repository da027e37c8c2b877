package prepare

import (
	"errors"
	"fmt"
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// ErrInvalidVersion is returned when the application version is not a
// semantic version (X.Y.Z, with optional pre-release and build parts).
var ErrInvalidVersion = errors.New("prepare: invalid application version")

// ErrBundleLoadFailed is returned, wrapped in a *ManifestError, when a bundle
// manifest or an agent it includes does not validate.
var ErrBundleLoadFailed = errors.New("prepare: bundle load failed")

// ErrModuleUnavailable is returned, wrapped in a *ModuleError, when a module
// source cannot be fetched, found or installed.
var ErrModuleUnavailable = errors.New("prepare: module unavailable")

// ErrInvalidSource is returned when a module source is not
// git+URL[@ref][#subdirectory=path], a file:// URL or a local path.
var ErrInvalidSource = errors.New("prepare: invalid module source")

// ErrMiss is returned when Lookup finds no warm entry.
var ErrMiss = errors.New("prepare: no warm entry")

// ErrRefuseClear is returned when Clear is asked to remove a directory that
// is not named "prepared".
var ErrRefuseClear = errors.New("prepare: refusing to remove a directory not named prepared")

// The code and classification the agent runtime reports a manifest that does
// not load with.
const (
	CodeBundleLoadFailed = "bundle_load_failed"
	ClassProtocol        = "protocol"
)

// DefaultProviderMessage is the agent runtime's message for a manifest
// whose default_provider is missing or not a string, word for word as the
// runtime prints it (the seed bundle-and-cache.md gives it): what prepare
// says, as the runtime it stands in for does. The diagnostic that comes
// with it speaks to the bundle's author, as check does
// (bundle/missing-default-provider, or bundle/wrong-type).
const DefaultProviderMessage = "bundle.md missing required default_provider: top-level field. This is a bundle integrity error; reinstall amplifier-agent."

// The diagnostic codes of prepare's own findings; discovery keeps the
// registry of every code.
const (
	CodeModuleUnavailable   = diag.CodeModuleUnavailable
	CodeIncludesNotPrepared = diag.CodeIncludesNotPrepared
)

// ManifestError is returned when a manifest, or an agent it includes, does
// not validate. Its code is always CodeBundleLoadFailed and its
// classification ClassProtocol.
type ManifestError struct {
	// Path is the manifest.
	Path string
	// Diagnostics are every problem found, errors and warnings, sorted.
	Diagnostics []diag.Diagnostic
}

// Code returns CodeBundleLoadFailed.
func (e *ManifestError) Code() string { return CodeBundleLoadFailed }

// Classification returns ClassProtocol.
func (e *ManifestError) Classification() string { return ClassProtocol }

// Message returns the headline: the runtime's own message
// (DefaultProviderMessage) when default_provider is missing or not a
// string, else the message of the first diag.CodeBundleLoadFailed
// diagnostic, else of the first error. The diagnostics say the rest, to
// the bundle's author.
func (e *ManifestError) Message() string {
	for _, d := range e.Diagnostics {
		if d.Severity == diag.SeverityError && (d.Code == diag.CodeBundleDefaultProvider ||
			d.Code == diag.CodeBundleWrongType && strings.HasPrefix(d.Message, "default_provider ")) {
			return DefaultProviderMessage
		}
	}
	for _, d := range e.Diagnostics {
		if d.Code == diag.CodeBundleLoadFailed && d.Severity == diag.SeverityError {
			return d.Message
		}
	}
	for _, d := range e.Diagnostics {
		if d.Severity == diag.SeverityError {
			return d.Message
		}
	}
	return "bundle manifest does not validate"
}

func (e *ManifestError) Error() string {
	n := diag.CountErrors(e.Diagnostics)
	if n > 1 {
		return fmt.Sprintf("load bundle manifest %s: %s (and %d more errors)", e.Path, e.Message(), n-1)
	}
	return fmt.Sprintf("load bundle manifest %s: %s", e.Path, e.Message())
}

// Is reports whether target is ErrBundleLoadFailed.
func (e *ManifestError) Is(target error) bool { return target == ErrBundleLoadFailed }

// ModuleError is returned when one module source cannot be fetched, found
// or installed.
type ModuleError struct {
	// Module is the module's id; Section says where it is declared
	// ("tools", "session.orchestrator", "agent explorer: hooks").
	Module  string
	Section string
	Source  string
	// Manifest and Range locate the declaration.
	Manifest string
	Range    diag.Range
	Err      error
}

func (e *ModuleError) Error() string {
	return fmt.Sprintf("module %s (%s): %v", e.Module, e.Source, e.Err)
}

// Unwrap returns the cause.
func (e *ModuleError) Unwrap() error { return e.Err }

// Is reports whether target is ErrModuleUnavailable.
func (e *ModuleError) Is(target error) bool { return target == ErrModuleUnavailable }

// Diagnostic returns the error as a diagnostic at the module's declaration.
func (e *ModuleError) Diagnostic() diag.Diagnostic {
	return diag.Diagnostic{
		Code:     CodeModuleUnavailable,
		Severity: diag.SeverityError,
		Path:     e.Manifest,
		Range:    e.Range,
		Message:  e.Error(),
	}
}

// BuildError is returned when one or more module sources fail during a cold
// build. No entry is written.
type BuildError struct {
	Manifest string
	Modules  []*ModuleError
}

func (e *BuildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "prepare %s: ", e.Manifest)
	for i, m := range e.Modules {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.Error())
	}
	return b.String()
}

// Unwrap returns the module errors.
func (e *BuildError) Unwrap() []error {
	errs := make([]error, len(e.Modules))
	for i, m := range e.Modules {
		errs[i] = m
	}
	return errs
}

// Cause is one cause of a failed build, and the modules it failed.
type Cause struct {
	// Message is the error, each module's own repository in it written
	// <repository> (its directory, for a local source, <path>), so that
	// one unreachable host is one message.
	Message string
	Modules []*ModuleError
}

// Causes groups the failed modules by their cause, in the order the
// causes are first met: thirty modules on one host that cannot be
// reached are one cause, said once.
func (e *BuildError) Causes() []Cause {
	var out []Cause
	index := map[string]int{}
	for _, m := range e.Modules {
		msg := m.cause()
		i, ok := index[msg]
		if !ok {
			i = len(out)
			index[msg] = i
			out = append(out, Cause{Message: msg})
		}
		out[i].Modules = append(out[i].Modules, m)
	}
	return out
}

// cause is the module's error with its repository written <repository>
// (its directory, for a local source, <path>).
func (e *ModuleError) cause() string {
	msg := e.Err.Error()
	src, err := ParseSource(e.Source)
	if err != nil {
		return msg
	}
	placeholder, names := "<path>", []string{src.Path}
	if src.Kind == SourceGit {
		u := strings.TrimSuffix(src.URL, "/")
		placeholder, names = "<repository>", []string{u + "/", u, strings.TrimSuffix(u, ".git") + "/", strings.TrimSuffix(u, ".git")}
	}
	for _, n := range names {
		if n != "" {
			msg = strings.ReplaceAll(msg, n, placeholder)
		}
	}
	return msg
}

// Diagnostics returns one diagnostic per failed module.
func (e *BuildError) Diagnostics() []diag.Diagnostic {
	ds := make([]diag.Diagnostic, len(e.Modules))
	for i, m := range e.Modules {
		ds[i] = m.Diagnostic()
	}
	return ds
}
