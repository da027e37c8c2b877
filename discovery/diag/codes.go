package diag

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

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
	CodeDepUnsatisfied  = "deps/unsatisfied"
	CodeDepNotInstalled = "deps/not-installed"

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

	// bundle/…: the files of bundle repositories: bundles, agents, modes,
	// skills, recipes (package bundle names them too). The text of a file.
	CodeBundleYAMLSyntax         = "bundle/yaml-syntax"
	CodeBundleNotMapping         = "bundle/not-mapping"
	CodeBundleFrontMatterMissing = "bundle/frontmatter-missing"
	CodeBundleUnterminated       = "bundle/frontmatter-unterminated"
	CodeBundleEncoding           = "bundle/invalid-utf8"
	CodeBundleTooLarge           = "bundle/too-large"
	CodeBundleDuplicateKey       = "bundle/duplicate-key"
	CodeBundleMarkdownInYAML     = "bundle/markdown-in-yaml"
	CodeBundleUnreadable         = "bundle/unreadable"

	// Schemas.
	CodeBundleUnknownKey   = "bundle/unknown-key"
	CodeBundleWrongType    = "bundle/wrong-type"
	CodeBundleMissingKey   = "bundle/missing-key"
	CodeBundleInvalidValue = "bundle/invalid-value"

	// What the runtime loads without a word.
	CodeBundleIncludeNoBundleKey  = "bundle/include-without-bundle-key"
	CodeBundleIncludesUnderBundle = "bundle/includes-under-bundle"
	CodeBundleAtInYAML            = "bundle/at-in-yaml"
	CodeBundleModuleNoID          = "bundle/module-without-module"
	CodeBundleMissingName         = "bundle/missing-name"
	CodeBundleAgentNoMeta         = "bundle/agent-without-meta"
	CodeBundleDefaultProvider     = "bundle/missing-default-provider"

	// Composition and references.
	CodeBundleIncludeUnresolved  = "bundle/include-unresolved"
	CodeBundleIncludeNotCached   = "bundle/include-not-cached"
	CodeBundleIncludeCycle       = "bundle/include-cycle"
	CodeBundleIncludePartial     = "bundle/include-partial"
	CodeBundleIncludeTooDeep     = "bundle/include-too-deep"
	CodeBundleComposeFails       = "bundle/compose-fails"
	CodeBundleAgentUnresolved    = "bundle/agent-unresolved"
	CodeBundleContextUnresolved  = "bundle/context-unresolved"
	CodeBundleMentionUnresolved  = "bundle/mention-unresolved"
	CodeBundleMentionPunctuation = "bundle/mention-punctuation"
	CodeBundleSettings           = "bundle/settings"

	// Recipes, skills.
	CodeBundleDuplicateStep = "bundle/duplicate-step-id"
	CodeBundleUnknownStep   = "bundle/unknown-step"
	CodeBundleNameMismatch  = "bundle/name-mismatch"

	// suppress/…: suppression comments (# amplidex: ignore[…]).
	CodeSuppressUnused = "suppress/unused"

	// limit/…: what is not reported.
	CodeTooManyDiagnostics = "limit/too-many-diagnostics"
)

// CodeInfo describes one diagnostic code.
type CodeInfo struct {
	Code     string
	Severity Severity
	Summary  string
	// Help says what to do about it, in a sentence or two.
	Help string
}

// Codes lists every diagnostic code with its default severity, a one-line
// description and what to do about it: grouped by area as the README shows
// them, but for codes added since, which come last.
var Codes = []CodeInfo{
	{CodeMissingPyproject, SeverityError, "a directory with resource directories has no pyproject.toml (`Missing pyproject.toml`): not a collection", "Add a pyproject.toml with a [project] table (name, version, description) to the directory, or move the resource directories out of the root."},
	{CodeTOMLSyntax, SeverityError, "pyproject.toml is not valid TOML", "Fix the TOML syntax at the position shown; until then the collection is skipped: it resolves nowhere."},
	{CodeMissingField, SeverityError, "[project] lacks name, version or description (`Required field missing: …`)", "Add the field to [project]: name, version and description are required."},
	{CodeInvalidVersion, SeverityError, "[project] version is not X.Y.Z semver (`Invalid version format`)", "Write the version as three numbers, X.Y.Z, such as 1.0.0."},
	{CodeInvalidName, SeverityError, "[project] name is not lowercase letters, digits and single hyphens", "Use lowercase letters, digits and single hyphens, such as my-collection."},
	{CodeMetadataType, SeverityError, "a pyproject field has the wrong type (urls, author, capabilities, requires)", "Give the field the type the format documents: urls a table of strings, author a string, capabilities a list of strings, requires a table of constraints."},
	{CodeInvalidConstraint, SeverityError, "a requires constraint is not a valid version range", "Write the constraint as ^1.2.3, ~1.2.3, >=1.0,<2.0 or ==1.5.0; until then that requirement is not checked."},
	{CodeMetadataUnknownKey, SeverityInfo, "[tool.amplifier.collection] has a key the format does not document", "Remove the key or check its spelling; amplidex reports it for information only."},

	{CodeFrontMatterMissing, SeverityError, "a profile, agent or bundle does not open with a `---` front matter block", "Open the file with a --- line, the YAML front matter, and a closing --- line."},
	{CodeFrontMatterUnterminated, SeverityError, "the front matter block has no closing `---`", "Add the closing --- line after the front matter."},
	{CodeFrontMatterSyntax, SeverityError, "the front matter is not valid YAML (position as YAML reports it)", "Fix the YAML at the position shown; quote values that hold a colon followed by a space."},
	{CodeFrontMatterNotMapping, SeverityError, "the front matter is YAML but not a mapping", "Write the front matter as key: value pairs."},
	{CodeFrontMatterInCodeFence, SeverityError, "the only YAML found is inside a Markdown code fence", "Move the YAML out of the code fence, between --- lines at the top of the file."},
	{CodeFrontMatterTooLarge, SeverityError, "the front matter is too large, too deep, or expands too many aliases", "Shorten the front matter; move long text into the body."},
	{CodeFrontMatterEncoding, SeverityError, "the file is not valid UTF-8", "Save the file as UTF-8."},

	{CodeUnknownKey, SeverityError, "a key outside the documented schema (a warning when configured so)", "Remove the key or correct its spelling (the message suggests the nearest known key); [schema] unknown_key = \"warning\" lowers it, but a near miss of a required key that is missing stays an error, its one diagnostic."},
	{CodeRequiredKey, SeverityError, "a required key is missing", "Add the key the message names."},
	{CodeWrongType, SeverityError, "a value has the wrong type", "Give the value the type the message names; module entries are mappings such as {module: tool-web}."},
	{CodeInvalidValue, SeverityError, "a value has the right type but is not allowed", "Use one of the values the message lists."},
	{CodeNameMismatch, SeverityWarning, "a document's name differs from its file name", "Make the name in the front matter match the file name, or rename the file."},
	{CodeDuplicateKey, SeverityError, "a mapping repeats a key (YAML loaders keep the last)", "Keep one of the repeated keys; YAML loaders keep only the last."},

	{CodeExtendsUnresolved, SeverityError, "`extends` names a profile that does not resolve", "Name an existing profile as collection:name; the message says why it does not resolve and suggests near names."},
	{CodeExtendsCycle, SeverityError, "profile inheritance forms a cycle (the message shows the chain)", "Break the cycle: one profile of the chain must not extend another of it."},
	{CodeExtendsTooDeep, SeverityError, "an `extends` chain is longer than 32 profiles; it is not followed further", "Shorten the extends chain to at most 32 profiles."},
	{CodeAgentUnknown, SeverityError, "a profile's agents list names an agent that does not exist", "Name an existing agent, as name or collection:name; the message suggests near names."},
	{CodeMentionUnresolved, SeverityError, "an `@collection:path` mention does not resolve to a file", "Point the mention at an existing file of a collection that resolves; the message says why it does not."},
	{CodeMentionEscapes, SeverityError, "an `@collection:path` mention leaves its collection (`..`)", "Keep the path inside the collection; remove the '..'."},

	{CodeDepUnsatisfied, SeverityError, "a required collection resolves, but its version does not meet the constraint", "Install a version that meets the constraint, or relax the constraint."},

	{CodeNestedNameMismatch, SeverityWarning, "the root pyproject.toml and the package copy disagree on the name", "Make the package copy of pyproject.toml name the collection as the root one does."},
	{CodeToolNoPyproject, SeverityWarning, "a scenario tool directory has no pyproject.toml", "Add a pyproject.toml to the scenario tool directory."},
	{CodeSymlinkLoop, SeverityWarning, "a symbolic link loops or points outside what may be followed; skipped", "Fix or remove the symbolic link."},
	{CodeUnreadable, SeverityWarning, "a file or directory could not be read; skipped", "Make the file or directory readable by the user amplidex runs as."},
	{CodeShadowed, SeverityInfo, "a collection is shadowed by one of the same name in a higher-precedence root", "Nothing to do if intended: a collection of the same name in a higher-precedence root wins."},
	{CodeDuplicateName, SeverityWarning, "two collections of one name in one root; the first in path order wins", "Rename or remove one of the two collections of this name in the root."},
	{CodeFileTooLarge, SeverityWarning, "a document is larger than the parser accepts; skipped", "Shorten the document; larger ones are not read."},
	{CodeNotRegular, SeverityWarning, "a FIFO, socket or device (or a link to one) where a document should be; never opened for reading", "Replace the FIFO, socket or device with a regular file."},

	{CodeLockCorrupt, SeverityError, "collections.lock is not valid JSON or not a lock file; it is never overwritten", "Restore collections.lock from version control, or remove it and reinstall the collections."},
	{CodeLockPathMissing, SeverityWarning, "a lock entry's path no longer exists", "Reinstall the collection or remove its entry from the lock file."},
	{CodeLockModuleEscapes, SeverityError, "a lock module path leaves its collection", "Keep module paths inside their collection."},
	{CodeLockNotLocked, SeverityWarning, "a collection is installed in the root but not in its lock file", "Reinstall the collection so that the lock file records it, or remove the directory."},
	{CodeLockNotInstalled, SeverityWarning, "a lock entry names a collection that is not installed", "Install the collection, or remove its entry from the lock file."},
	{CodeLockSchema, SeverityError, "a lock entry lacks a field or has one of the wrong type", "Give the entry the fields the lock format requires, with their types."},

	{CodeBundleLoadFailed, SeverityError, "a bundle manifest cannot be loaded (`bundle_load_failed`), such as a missing default_provider", "Add a top-level default_provider to the front matter of bundle.md, naming the provider the bundle uses by default, such as default_provider: anthropic."},
	{CodeBundleAgentMissing, SeverityError, "a bundle includes an agent with no agents/<name>.md", "Add agents/<name>.md beside the manifest, or remove the name from agents.include."},
	{CodeModuleUnavailable, SeverityError, "a module source could not be fetched, found or installed; no entry is written", "Check the module source: the repository, ref or path must exist and be reachable."},
	{CodeIncludesNotPrepared, SeverityWarning, "a manifest's includes are left out of the mount plan: only inline modules are prepared", "Nothing to do unless the included bundles' modules are needed in the mount plan."},
	{CodeBundleSource, SeverityError, "a module source is not git+URL@ref, file:// or a local path", "Write the source as git+https://host/repo@ref, file:///path or a local path."},

	{CodeTooManyDiagnostics, SeverityError, "a file has more diagnostics of one area than are reported (the first 100); one says how many more, as severe as the worst of them", "Fix the diagnostics reported first; the rest are usually the same mistake repeated."},

	{CodeSuppressUnused, SeverityInfo, "a suppression comment (`# amplidex: ignore[code]`) suppresses nothing, names no known code, or is malformed", "Remove the suppression comment, or correct the code it names."},

	{CodeDepNotInstalled, SeverityWarning, "a required collection is not installed; references into it are not checked", "Provide the collection: set AMPLIDEX_BUNDLED or [roots] bundled to a directory that holds it, install it in a collections root, or pass check --with DIR; or remove the requirement. A name installed nowhere and not required stays an error at each reference."},

	// The files of bundle repositories (package bundle).
	{CodeBundleYAMLSyntax, SeverityError, "a bundle, agent, mode, skill or recipe is not YAML the runtime's loader accepts", "Fix the YAML at the position shown; quote values that hold `: ` or start with @, *, & or !."},
	{CodeBundleNotMapping, SeverityError, "the YAML (or front matter) is a list or a scalar where the runtime expects a mapping", "Write the document as key: value pairs, starting with bundle: (or meta:, mode:, name:)."},
	{CodeBundleFrontMatterMissing, SeverityError, "an agent, mode or skill has no --- front matter, so the runtime reads none of its settings", "Open the file with a --- line, the YAML front matter, and a closing --- line."},
	{CodeBundleUnterminated, SeverityError, "the front matter has no closing --- line; the runtime takes the whole file as body", "Add the closing --- line after the front matter."},
	{CodeBundleEncoding, SeverityError, "the file is not valid UTF-8; the runtime cannot read it", "Save the file as UTF-8."},
	{CodeBundleTooLarge, SeverityError, "the file is larger, deeper or expands more aliases than is read", "Shorten the file or the nesting; long text belongs in the Markdown body or a context file."},
	{CodeBundleDuplicateKey, SeverityWarning, "a mapping repeats a key; the runtime keeps only the last value", "Keep one of the repeated keys."},
	{CodeBundleMarkdownInYAML, SeverityError, "a .yaml file holds Markdown front matter (--- … --- and a body); the runtime's YAML loader refuses it", "Rename the file to .md (and its includes), or remove the --- lines and the Markdown body."},
	{CodeBundleUnreadable, SeverityError, "a file could not be read (not a regular file, too large, or unreadable)", "Make the path a readable regular file under the size limit."},
	{CodeBundleUnknownKey, SeverityError, "a key the format does not define; the runtime ignores it without a word", "Remove the key or correct its spelling: the message suggests the nearest known key."},
	{CodeBundleWrongType, SeverityError, "a value has the wrong type (tools: as a mapping, context: as a list, …); the runtime crashes on it or ignores it", "Give the value the shape the message shows, such as tools: [{module: tool-x, source: …}] or context: {include: [ns:path]}."},
	{CodeBundleMissingKey, SeverityError, "a required key is missing", "Add the key the message names."},
	{CodeBundleInvalidValue, SeverityError, "a value has the right type but is not allowed", "Use one of the values the message lists."},
	{CodeBundleIncludeNoBundleKey, SeverityError, "an includes entry has no bundle: key (such as - behavior: …); the runtime skips it without a word", "Write the entry as - bundle: SOURCE."},
	{CodeBundleIncludesUnderBundle, SeverityError, "includes is written under bundle:, where the runtime never looks", "Move includes: to the top level of the file, beside bundle:."},
	{CodeBundleAtInYAML, SeverityError, "a YAML reference starts with @, which belongs to Markdown mentions; it resolves to nothing", "Remove the @: write ns:path in YAML, @ns:path only in Markdown."},
	{CodeBundleModuleNoID, SeverityError, "a providers, tools or hooks entry has no module (nor id); composition drops it", "Add module: MODULE-ID to the entry."},
	{CodeBundleMissingName, SeverityWarning, "a bundle has no bundle.name: it registers no namespace and its context keys collide", "Add bundle: {name: …, version: …, description: …}."},
	{CodeBundleAgentNoMeta, SeverityWarning, "an agent file has no meta: section (an error when it has no description either, so the agent is never chosen)", "Put name and description under meta:, as meta: {name: x, description: …}."},
	{CodeBundleDefaultProvider, SeverityError, "an amplifier-agent manifest has no top-level default_provider", "Add default_provider: NAME at the top level of the manifest's front matter."},
	{CodeBundleIncludeUnresolved, SeverityError, "an include resolves to no bundle; the runtime skips it (or drops the whole bundle that holds it) with a log line", "Point the include at an existing bundle: ns:path of a loaded namespace, a file, or git+https://…@ref#subdirectory=path."},
	{CodeBundleIncludeNotCached, SeverityWarning, "an include is a git URL whose checkout is not in the runtime's cache; it is not fetched, so it is not checked", "Run the bundle once with amplifier (which clones it into $AMPLIFIER_HOME/cache), or map it to a local checkout in settings.yaml under sources.bundles."},
	{CodeBundleIncludeCycle, SeverityError, "an include leads back to a bundle that is still loading; the runtime skips it", "Break the cycle: remove the include the message names."},
	{CodeBundleIncludePartial, SeverityWarning, "an included bundle is composed without its own includes, because an earlier ns:path include loaded its namespace bare", "List - bundle: NAME before any NAME:path include of the same namespace."},
	{CodeBundleIncludeTooDeep, SeverityError, "includes nest deeper (or load more bundles) than amplidex follows", "Flatten the includes."},
	{CodeBundleComposeFails, SeverityError, "the runtime crashes composing this bundle (a section of the wrong type); the bundle that includes it loses it", "Give session and spawn mapping values, and providers, tools and hooks lists of mappings."},
	{CodeBundleAgentUnresolved, SeverityError, "an agents.include name resolves to no agent file; the agent is never loaded", "Write ns:name for an existing agents/name.md of that namespace, or add the file."},
	{CodeBundleContextUnresolved, SeverityError, "a context path resolves to no file; it contributes nothing", "Write ns:path of an existing file (relative to the namespace's root), or add the file."},
	{CodeBundleMentionUnresolved, SeverityError, "an @ns:path mention names a file that does not exist; the runtime skips it", "Correct the path (relative to the namespace's root), or add the file."},
	{CodeBundleMentionPunctuation, SeverityError, "an @mention ends with . or :, which the runtime keeps as part of the path, so it resolves to nothing", "Put a space (or wrap the mention in parentheses) before the punctuation, as the message shows."},
	{CodeBundleSettings, SeverityError, "an Amplifier settings file (bundle.added, sources.bundles) is malformed", "Fix the settings file: bundle.added and sources.bundles map names to URIs."},
	{CodeBundleDuplicateStep, SeverityError, "two steps of a recipe have the same id", "Give every step a unique id."},
	{CodeBundleUnknownStep, SeverityError, "depends_on names a step the recipe does not have", "Name the id of a step of the recipe."},
	{CodeBundleNameMismatch, SeverityWarning, "a skill's name differs from its directory's name", "Make name: match the directory, or rename the directory."},
}

// Example returns a small file that earns the code, the file's path on
// its first line as a comment ("" when the code has none), for
// `amplidex rule` and docs/diagnostics.md.
func (c CodeInfo) Example() string { return codeExamples()[c.Code] }

// codeExamples holds the example of each code (see CodeInfo.Example). It
// is made when first asked for: a map literal at package level would be
// built by every process at start.
var codeExamples = sync.OnceValue(func() map[string]string {
	return map[string]string{
		CodeMissingPyproject: `# my-collection/  (a directory of a root)
profiles/dev.md
agents/helper.md
# … and no pyproject.toml beside them`,
		CodeTOMLSyntax: `# pyproject.toml
[project]
name = "my-collection"
version = 1.0.0          # a version is a string: "1.0.0"`,
		CodeMissingField: `# pyproject.toml
[project]
name = "my-collection"
version = "1.0.0"
# no description`,
		CodeInvalidVersion: `# pyproject.toml
[project]
name = "my-collection"
version = "0.1"          # want MAJOR.MINOR.PATCH: "0.1.0"
description = "Tools for my team"`,
		CodeInvalidName: `# pyproject.toml
[project]
name = "My_Collection"   # want "my-collection"`,
		CodeMetadataType: `# pyproject.toml
[tool.amplifier.collection]
capabilities = "search"  # want a list: ["search"]`,
		CodeInvalidConstraint: `# pyproject.toml
[tool.amplifier.collection.requires]
foundation = "=>1.0.0"   # the operator is ">="`,
		CodeMetadataUnknownKey: `# pyproject.toml
[tool.amplifier.collection]
capabilties = ["search"] # capabilities`,

		CodeFrontMatterMissing: `# agents/helper.md
You help with the build.  # no --- front matter above the text`,
		CodeFrontMatterUnterminated: `# agents/helper.md
---
name: helper
description: Helps
You help with the build.  # no closing ---`,
		CodeFrontMatterSyntax: `# agents/helper.md
---
name: helper
description: Helps: with builds   # a colon and a space in a plain value
---`,
		CodeFrontMatterNotMapping: `# agents/helper.md
---
- helper
- Helps
---`,
		CodeFrontMatterInCodeFence: "# agents/helper.md\n```yaml\nname: helper\ndescription: Helps\n```",
		CodeFrontMatterTooLarge: `# profiles/dev.md
---
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # … expanded beyond the limit
---`,
		CodeFrontMatterEncoding: `# agents/helper.md, saved as Latin-1
---
name: helper
description: Caf\xe9   # the byte 0xE9 is not UTF-8
---`,

		CodeUnknownKey: `# agents/helper.md
---
name: helper
descripton: Helps        # did you mean description?
---`,
		CodeRequiredKey: `# profiles/dev.md
---
profile:
  name: dev
  version: 1.0.0
  # no description
---`,
		CodeWrongType: `# profiles/dev.md
---
tools:
  - tool-web             # a module entry is a mapping: {module: tool-web}
---`,
		CodeInvalidValue: `# profiles/dev.md
---
agents: some             # "all", "none" or a list of names
---`,
		CodeNameMismatch: `# profiles/status-test.md
---
profile:
  name: test-status      # the file is status-test.md
---`,
		CodeDuplicateKey: `# agents/helper.md
---
name: helper
description: first
description: second      # YAML loaders keep this one
---`,

		CodeExtendsUnresolved: `# profiles/dev.md
---
profile:
  name: dev
  extends: foundation:bse   # foundation has no profiles/bse.md
---`,
		CodeExtendsCycle: `# profiles/a.md extends b, and profiles/b.md:
---
profile:
  name: b
  extends: a               # a → b → a
---`,
		CodeExtendsTooDeep: `# profiles/p33.md
---
profile:
  name: p33
  extends: p32             # … which extends p31, and so on down to p0
---`,
		CodeAgentUnknown: `# profiles/dev.md
---
agents:
  - reviewr                # no agents/reviewr.md anywhere
---`,
		CodeMentionUnresolved: `# context/guide.md
See @foundation:context/shard.md.   # the file is context/shared.md`,
		CodeMentionEscapes: `# context/guide.md
See @foundation:../secrets.md.`,

		CodeDepNotInstalled: `# pyproject.toml, with no collection named foundation in any root
[tool.amplifier.collection.requires]
foundation = "^1.0.0"      # provide it: AMPLIDEX_BUNDLED, a root, or check --with DIR`,
		CodeDepUnsatisfied: `# pyproject.toml, with foundation 1.4.0 installed
[tool.amplifier.collection.requires]
foundation = "^2.0.0"`,

		CodeNestedNameMismatch: `# pyproject.toml               # the package copy, my_collection/pyproject.toml,
[project]                       # says name = "other"
name = "my-collection"`,
		CodeToolNoPyproject: `# scenario-tools/report/
main.py                         # … and no pyproject.toml`,
		CodeSymlinkLoop: `# context/loop -> .          # a link to its own directory`,
		CodeUnreadable:  `# context/private.md          # mode 000: amplidex cannot read it`,
		CodeShadowed: `# ~/.amplifier/collections/foundation, version 1.0.0,
# while the project's .amplifier/collections/foundation wins`,
		CodeDuplicateName: `# ~/.amplifier/collections/foundation/pyproject.toml: name = "foundation"
# ~/.amplifier/collections/foundation-old/pyproject.toml: name = "foundation"`,
		CodeFileTooLarge: `# context/dump.md             # 20 MiB: larger than the 8 MiB a document may be`,
		CodeNotRegular:   `# agents/helper.md            # a named pipe (mkfifo), not a file`,

		CodeLockCorrupt: `# .amplifier/collections.lock
{"version": "1.1", "collections": {   # cut short`,
		CodeLockPathMissing: `# .amplifier/collections.lock
{"version": "1.1", "collections": {"tools": {"path": "/gone/tools", …}}}`,
		CodeLockModuleEscapes: `# .amplifier/collections.lock
… "modules": [{"name": "tool-x", "path": "../../elsewhere"}] …`,
		CodeLockNotLocked: `# .amplifier/collections/tools/  installed by hand,
# and no "tools" entry in .amplifier/collections.lock`,
		CodeLockNotInstalled: `# .amplifier/collections.lock names "tools",
# and there is no .amplifier/collections/tools/`,
		CodeLockSchema: `# .amplifier/collections.lock
{"version": "1.1", "collections": {"tools": {"path": 42}}}   # path is a string`,

		CodeBundleLoadFailed: `# bundle.md
---
bundle:
  name: my-bundle
# no default_provider: the runtime refuses to load it
---`,
		CodeBundleAgentMissing: `# bundle.md
---
agents:
  include: [reviewer]      # no agents/reviewer.md beside bundle.md
---`,
		CodeModuleUnavailable: `# bundle.md
---
tools:
  - module: tool-web
    source: git+https://github.com/example/tool-web@no-such-branch
---`,
		CodeIncludesNotPrepared: `# bundle.md
---
includes:
  - foundation:bundles/base.md   # its modules are not in the mount plan
---`,
		CodeBundleSource: `# bundle.md
---
tools:
  - module: tool-web
    source: github.com/example/tool-web   # want git+https://…@ref
---`,

		CodeTooManyDiagnostics: `# context/links.md
@missing:a.md @missing:b.md @missing:c.md …   # 5,000 mentions that do not resolve:
                                              # 100 are reported, and one says how many more`,

		CodeSuppressUnused: `# agents/helper.md
---
name: helper   # amplidex: ignore[schema/unknown-key]   (nothing here to suppress)
---`,
		CodeBundleYAMLSyntax: `# behaviors/review.yaml
bundle:
  name: review
  description: Reviews: code   # a colon and a space in a plain value`,
		CodeBundleNotMapping: `# behaviors/review.yaml
- bundle: review             # a list where the runtime reads a mapping`,
		CodeBundleFrontMatterMissing: `# agents/reviewer.md
You review code.             # no --- front matter above the text`,
		CodeBundleUnterminated: `# agents/reviewer.md
---
meta:
  name: reviewer
You review code.             # no closing ---`,
		CodeBundleMarkdownInYAML: `# behaviors/review.yaml
---
bundle:
  name: review
---
Review with care.            # Markdown: name the file review.md`,
		CodeBundleDuplicateKey: `# bundle.md
---
bundle:
  name: app
  name: application          # the runtime keeps this one
---`,
		CodeBundleUnknownKey: `# bundle.md
---
bundle:
  name: app
  verison: 1.0.0             # did you mean version?
---`,
		CodeBundleWrongType: `# bundle.md
---
tools:                       # a list of module entries: - module: tool-web
  tool-web: {source: git+https://github.com/microsoft/amplifier-module-tool-web@main}
---`,
		CodeBundleMissingKey: `# skills/review/SKILL.md
---
name: review                 # no description
---`,
		CodeBundleInvalidValue: `# recipes/release.yaml
name: release
version: "1.0"               # a semantic version: 1.0.0`,
		CodeBundleEncoding: `# agents/reviewer.md, saved as Latin-1
---
meta:
  description: Caf\xe9       # the byte 0xE9 is not UTF-8
---`,
		CodeBundleTooLarge: `# behaviors/review.yaml
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # … expanded beyond the limit`,
		CodeBundleUnreadable: `# agents/reviewer.md          # a named pipe (mkfifo), or mode 000`,
		CodeBundleIncludePartial: `# bundle.md
---
includes:
  - bundle: foundation:behaviors/logging   # loads foundation bare, without its includes
  - bundle: foundation                     # … so this one gets foundation bare too
---`,
		CodeBundleIncludeTooDeep: `# behaviors/b33.yaml
includes:
  - bundle: app:behaviors/b32   # … which includes b31, and so on down to b0`,
		CodeBundleComposeFails: `# behaviors/review.yaml
bundle:
  name: review
session: loop-basic          # a mapping: session: {orchestrator: {module: loop-basic}}`,
		CodeBundleSettings: `# .amplifier/settings.yaml
bundle:
  added:
    - app                    # a mapping of names to URIs: app: git+https://…`,
		CodeBundleIncludeNoBundleKey: `# bundle.md
---
includes:
  - behavior: app:behaviors/review   # the runtime skips it: - bundle: app:behaviors/review
---`,
		CodeBundleIncludesUnderBundle: `# bundle.md
---
bundle:
  name: app
  includes:                  # the runtime looks for includes at the top level
    - bundle: foundation
---`,
		CodeBundleAtInYAML: `# bundle.md
---
context:
  include:
    - "@app:context/guide.md"   # write app:context/guide.md
---`,
		CodeBundleModuleNoID: `# behaviors/review.yaml
tools:
  - source: git+https://github.com/microsoft/amplifier-module-tool-web@main   # no module: tool-web`,
		CodeBundleMissingName: `# behaviors/review.yaml
tools:                       # no bundle: {name: …}
  - module: tool-web`,
		CodeBundleAgentNoMeta: `# agents/reviewer.md
---
name: reviewer               # put name and description under meta:
description: Reviews code
---`,
		CodeBundleDefaultProvider: `# amplifier_agent_lib/bundle/bundle.md (an amplifier-agent manifest)
---
bundle:
  name: agent-manifest
# no default_provider: anthropic
---`,
		CodeBundleIncludeUnresolved: `# bundle.md
---
includes:
  - bundle: app:behaviors/reveiw   # no behaviors/reveiw.yaml
---`,
		CodeBundleIncludeNotCached: `# bundle.md, with no checkout of the repository in $AMPLIFIER_HOME/cache
---
includes:
  - bundle: git+https://github.com/microsoft/amplifier-bundle-recipes@main
---`,
		CodeBundleIncludeCycle: `# behaviors/a.yaml includes app:behaviors/b, and behaviors/b.yaml:
includes:
  - bundle: app:behaviors/a     # a → b → a`,
		CodeBundleAgentUnresolved: `# bundle.md
---
agents:
  include:
    - app:reviewr            # no agents/reviewr.md
---`,
		CodeBundleContextUnresolved: `# bundle.md
---
context:
  include:
    - app:context/gude.md    # the file is context/guide.md
---`,
		CodeBundleMentionUnresolved: `# agents/reviewer.md
Follow @app:context/gude.md   # the file is context/guide.md`,
		CodeBundleMentionPunctuation: `# agents/reviewer.md
Follow @app:context/guide.md.   # the runtime reads "guide.md." as the path`,
		CodeBundleDuplicateStep: `# recipes/release.yaml
steps:
  - id: build
  - id: build                # ids are unique`,
		CodeBundleUnknownStep: `# recipes/release.yaml
steps:
  - id: build
  - id: publish
    depends_on: [biuld]      # no step biuld`,
		CodeBundleNameMismatch: `# skills/review/SKILL.md
---
name: reviewing              # the directory is review
---`,
	}
})

// MatchCode reports whether pattern selects code: pattern is the code
// itself ("ref/agent-unknown"), or an area ("schema/" or "schema") that
// selects every code in it.
func MatchCode(pattern, code string) bool {
	if pattern == code {
		return true
	}
	area := strings.TrimSuffix(pattern, "/")
	return area != "" && !strings.Contains(area, "/") && strings.HasPrefix(code, area+"/")
}

// CheckCodePattern returns nil when pattern selects at least one code of
// Codes, and otherwise an error that names the nearest code or area.
func CheckCodePattern(pattern string) error {
	for _, c := range Codes {
		if MatchCode(pattern, c.Code) {
			return nil
		}
	}
	known := make([]string, 0, len(Codes)+10)
	for _, c := range Codes {
		area, _, _ := strings.Cut(c.Code, "/")
		if !slices.Contains(known, area+"/") {
			known = append(known, area+"/")
		}
		known = append(known, c.Code)
	}
	msg := fmt.Sprintf("%q is not a diagnostic code or area", pattern)
	if now := renamedCode(pattern); now != "" {
		msg += fmt.Sprintf(" (it was renamed); did you mean %q?", now)
	} else if near := Suggest(pattern, known); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return fmt.Errorf("%s", msg)
}

// renamedCode returns the code that replaced a code no longer made, or
// "": a suppression comment or a selection that names the old one is told
// the new one.
func renamedCode(code string) string {
	switch code {
	case "deps/missing":
		// A required collection that is not installed is a warning now,
		// and references into it are not checked.
		return CodeDepNotInstalled
	}
	return ""
}
