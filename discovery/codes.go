package discovery

// Diagnostic codes. They are stable: tools match on them. Each is listed in
// Codes with its default severity and a one-line description, and the README
// lists them all.
const (
	// metadata/…: pyproject.toml.
	CodeMissingPyproject   = "metadata/missing-pyproject"
	CodeTOMLSyntax         = "metadata/toml-syntax"
	CodeMissingField       = "metadata/missing-field"
	CodeInvalidVersion     = "metadata/invalid-version"
	CodeInvalidName        = "metadata/invalid-name"
	CodeMetadataType       = "metadata/wrong-type"
	CodeInvalidConstraint  = "metadata/invalid-constraint"
	CodeMetadataUnknownKey = "metadata/unknown-key"

	// frontmatter/…: the YAML block that opens a profile, agent or bundle.
	CodeFrontMatterMissing      = "frontmatter/missing"
	CodeFrontMatterUnterminated = "frontmatter/unterminated"
	CodeFrontMatterSyntax       = "frontmatter/yaml-syntax"
	CodeFrontMatterNotMapping   = "frontmatter/not-mapping"
	CodeFrontMatterInCodeFence  = "frontmatter/in-code-fence"
	CodeFrontMatterTooLarge     = "frontmatter/too-large"
	CodeFrontMatterEncoding     = "frontmatter/invalid-utf8"

	// schema/…: keys and values of front matter.
	CodeUnknownKey   = "schema/unknown-key"
	CodeRequiredKey  = "schema/missing-key"
	CodeWrongType    = "schema/wrong-type"
	CodeInvalidValue = "schema/invalid-value"
	CodeNameMismatch = "schema/name-mismatch"
	CodeDuplicateKey = "schema/duplicate-key"

	// ref/…: cross-references between documents and collections.
	CodeExtendsUnresolved = "ref/extends-unresolved"
	CodeExtendsCycle      = "ref/extends-cycle"
	CodeExtendsTooDeep    = "ref/extends-too-deep"
	CodeAgentUnknown      = "ref/agent-unknown"
	CodeMentionUnresolved = "ref/mention-unresolved"
	CodeMentionEscapes    = "ref/mention-escapes"

	// deps/…: [tool.amplifier.collection.requires].
	CodeDepMissing     = "deps/missing"
	CodeDepUnsatisfied = "deps/unsatisfied"

	// layout/…: where files and directories are.
	CodeNestedNameMismatch = "layout/nested-name-mismatch"
	CodeToolNoPyproject    = "layout/tool-missing-pyproject"
	CodeSymlinkLoop        = "layout/symlink-loop"
	CodeUnreadable         = "layout/unreadable"
	CodeShadowed           = "layout/shadowed"
	CodeDuplicateName      = "layout/duplicate-name"
	CodeFileTooLarge       = "layout/file-too-large"
	CodeNotRegular         = "layout/not-regular"

	// lock/…: collections.lock.
	CodeLockCorrupt       = "lock/corrupt"
	CodeLockPathMissing   = "lock/path-missing"
	CodeLockModuleEscapes = "lock/module-escapes"
	CodeLockNotLocked     = "lock/not-locked"
	CodeLockNotInstalled  = "lock/not-installed"
	CodeLockSchema        = "lock/schema"

	// bundle/…: bundle manifests (bundle.md).
	CodeBundleLoadFailed    = "bundle/load-failed"
	CodeBundleAgentMissing  = "bundle/agent-missing"
	CodeModuleUnavailable   = "bundle/module-unavailable"
	CodeIncludesNotPrepared = "bundle/includes-not-prepared"
	CodeBundleSource        = "bundle/invalid-source"

	// suppress/…: suppression comments (# amplidex: ignore[…]).
	CodeSuppressUnused = "suppress/unused"
)

// CodeInfo describes one diagnostic code.
type CodeInfo struct {
	Code     string
	Severity Severity
	Summary  string
}

// Codes lists every diagnostic code with its default severity and a one-line
// description, in the order the README shows them.
var Codes = []CodeInfo{
	{CodeMissingPyproject, SeverityError, "a directory with resource directories has no pyproject.toml (`Missing pyproject.toml`): not a collection"},
	{CodeTOMLSyntax, SeverityError, "pyproject.toml is not valid TOML"},
	{CodeMissingField, SeverityError, "[project] lacks name, version or description (`Required field missing: …`)"},
	{CodeInvalidVersion, SeverityError, "[project] version is not X.Y.Z semver (`Invalid version format`)"},
	{CodeInvalidName, SeverityError, "[project] name is not lowercase letters, digits and single hyphens"},
	{CodeMetadataType, SeverityError, "a pyproject field has the wrong type (urls, author, capabilities, requires)"},
	{CodeInvalidConstraint, SeverityError, "a requires constraint is not a valid version range"},
	{CodeMetadataUnknownKey, SeverityInfo, "[tool.amplifier.collection] has a key the format does not document"},

	{CodeFrontMatterMissing, SeverityError, "a profile, agent or bundle does not open with a `---` front matter block"},
	{CodeFrontMatterUnterminated, SeverityError, "the front matter block has no closing `---`"},
	{CodeFrontMatterSyntax, SeverityError, "the front matter is not valid YAML (position as YAML reports it)"},
	{CodeFrontMatterNotMapping, SeverityError, "the front matter is YAML but not a mapping"},
	{CodeFrontMatterInCodeFence, SeverityError, "the only YAML found is inside a Markdown code fence"},
	{CodeFrontMatterTooLarge, SeverityError, "the front matter is too large, too deep, or expands too many aliases"},
	{CodeFrontMatterEncoding, SeverityError, "the file is not valid UTF-8"},

	{CodeUnknownKey, SeverityError, "a key outside the documented schema (a warning when configured so)"},
	{CodeRequiredKey, SeverityError, "a required key is missing"},
	{CodeWrongType, SeverityError, "a value has the wrong type"},
	{CodeInvalidValue, SeverityError, "a value has the right type but is not allowed"},
	{CodeNameMismatch, SeverityWarning, "a document's name differs from its file name"},
	{CodeDuplicateKey, SeverityError, "a mapping repeats a key (YAML loaders keep the last)"},

	{CodeExtendsUnresolved, SeverityError, "`extends` names a profile that does not resolve"},
	{CodeExtendsCycle, SeverityError, "profile inheritance forms a cycle (the message shows the chain)"},
	{CodeExtendsTooDeep, SeverityError, "an `extends` chain is longer than 32 profiles; it is not followed further"},
	{CodeAgentUnknown, SeverityError, "a profile's agents list names an agent that does not exist"},
	{CodeMentionUnresolved, SeverityError, "an `@collection:path` mention does not resolve to a file"},
	{CodeMentionEscapes, SeverityError, "an `@collection:path` mention leaves its collection (`..`)"},

	{CodeDepMissing, SeverityError, "a required collection resolves nowhere"},
	{CodeDepUnsatisfied, SeverityError, "a required collection resolves, but its version does not meet the constraint"},

	{CodeNestedNameMismatch, SeverityWarning, "the root pyproject.toml and the package copy disagree on the name"},
	{CodeToolNoPyproject, SeverityWarning, "a scenario tool directory has no pyproject.toml"},
	{CodeSymlinkLoop, SeverityWarning, "a symbolic link loops or points outside what may be followed; skipped"},
	{CodeUnreadable, SeverityWarning, "a file or directory could not be read; skipped"},
	{CodeShadowed, SeverityInfo, "a collection is shadowed by one of the same name in a higher-precedence root"},
	{CodeDuplicateName, SeverityWarning, "two collections of one name in one root; the first in path order wins"},
	{CodeFileTooLarge, SeverityWarning, "a document is larger than the parser accepts; skipped"},
	{CodeNotRegular, SeverityWarning, "a FIFO, socket or device (or a link to one) where a document should be; never opened for reading"},

	{CodeLockCorrupt, SeverityError, "collections.lock is not valid JSON or not a lock file; it is never overwritten"},
	{CodeLockPathMissing, SeverityWarning, "a lock entry's path no longer exists"},
	{CodeLockModuleEscapes, SeverityError, "a lock module path leaves its collection"},
	{CodeLockNotLocked, SeverityWarning, "a collection is installed in the root but not in its lock file"},
	{CodeLockNotInstalled, SeverityWarning, "a lock entry names a collection that is not installed"},
	{CodeLockSchema, SeverityError, "a lock entry lacks a field or has one of the wrong type"},

	{CodeBundleLoadFailed, SeverityError, "a bundle manifest cannot be loaded (`bundle_load_failed`), such as a missing default_provider"},
	{CodeBundleAgentMissing, SeverityError, "a bundle includes an agent with no agents/<name>.md"},
	{CodeModuleUnavailable, SeverityError, "a module source could not be fetched, found or installed; no entry is written"},
	{CodeIncludesNotPrepared, SeverityWarning, "a manifest's includes are left out of the mount plan: only inline modules are prepared"},
	{CodeBundleSource, SeverityError, "a module source is not git+URL@ref, file:// or a local path"},

	{CodeSuppressUnused, SeverityInfo, "a suppression comment (`# amplidex: ignore[code]`) suppresses nothing, names no known code, or is malformed"},
}
