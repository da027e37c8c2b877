package bundle

import (
	"github.com/amplidex/amplidex/discovery/diag"
)

// Diagnostic codes of bundle repositories. They are stable: tools match on
// them. Each is listed in Codes with its default severity, a one-line
// description and the fix.
const (
	// The text of a file.
	CodeYAMLSyntax         = "bundle/yaml-syntax"
	CodeNotMapping         = "bundle/not-mapping"
	CodeFrontMatterMissing = "bundle/frontmatter-missing"
	CodeUnterminated       = "bundle/frontmatter-unterminated"
	CodeEncoding           = "bundle/invalid-utf8"
	CodeTooLarge           = "bundle/too-large"
	CodeDuplicateKey       = "bundle/duplicate-key"
	CodeMarkdownInYAML     = "bundle/markdown-in-yaml"
	CodeUnreadable         = "bundle/unreadable"

	// Schemas.
	CodeUnknownKey   = "bundle/unknown-key"
	CodeWrongType    = "bundle/wrong-type"
	CodeMissingKey   = "bundle/missing-key"
	CodeInvalidValue = "bundle/invalid-value"

	// What the runtime loads without a word.
	CodeIncludeNoBundleKey  = "bundle/include-without-bundle-key"
	CodeIncludesUnderBundle = "bundle/includes-under-bundle"
	CodeAtInYAML            = "bundle/at-in-yaml"
	CodeModuleNoID          = "bundle/module-without-module"
	CodeMissingName         = "bundle/missing-name"
	CodeAgentNoMeta         = "bundle/agent-without-meta"
	CodeDefaultProvider     = "bundle/missing-default-provider"

	// Composition and references.
	CodeIncludeUnresolved  = "bundle/include-unresolved"
	CodeIncludeNotCached   = "bundle/include-not-cached"
	CodeIncludeCycle       = "bundle/include-cycle"
	CodeIncludePartial     = "bundle/include-partial"
	CodeIncludeTooDeep     = "bundle/include-too-deep"
	CodeComposeFails       = "bundle/compose-fails"
	CodeAgentUnresolved    = "bundle/agent-unresolved"
	CodeContextUnresolved  = "bundle/context-unresolved"
	CodeMentionUnresolved  = "bundle/mention-unresolved"
	CodeMentionPunctuation = "bundle/mention-punctuation"
	CodeSettings           = "bundle/settings"

	// Recipes, skills.
	CodeDuplicateStep = "bundle/duplicate-step-id"
	CodeUnknownStep   = "bundle/unknown-step"
	CodeNameMismatch  = "bundle/name-mismatch"
)

// Codes lists every code of bundle repositories with its default
// severity, what it means and what to do about it.
var Codes = []diag.CodeInfo{
	{Code: CodeYAMLSyntax, Severity: diag.SeverityError, Summary: "a bundle, agent, mode, skill or recipe is not YAML the runtime's loader accepts", Help: "Fix the YAML at the position shown; quote values that hold `: ` or start with @, *, & or !."},
	{Code: CodeNotMapping, Severity: diag.SeverityError, Summary: "the YAML (or front matter) is a list or a scalar where the runtime expects a mapping", Help: "Write the document as key: value pairs, starting with bundle: (or meta:, mode:, name:)."},
	{Code: CodeFrontMatterMissing, Severity: diag.SeverityError, Summary: "an agent, mode or skill has no --- front matter, so the runtime reads none of its settings", Help: "Open the file with a --- line, the YAML front matter, and a closing --- line."},
	{Code: CodeUnterminated, Severity: diag.SeverityError, Summary: "the front matter has no closing --- line; the runtime takes the whole file as body", Help: "Add the closing --- line after the front matter."},
	{Code: CodeEncoding, Severity: diag.SeverityError, Summary: "the file is not valid UTF-8; the runtime cannot read it", Help: "Save the file as UTF-8."},
	{Code: CodeTooLarge, Severity: diag.SeverityError, Summary: "the file is larger, deeper or expands more aliases than is read", Help: "Shorten the file or the nesting; long text belongs in the Markdown body or a context file."},
	{Code: CodeDuplicateKey, Severity: diag.SeverityWarning, Summary: "a mapping repeats a key; the runtime keeps only the last value", Help: "Keep one of the repeated keys."},
	{Code: CodeMarkdownInYAML, Severity: diag.SeverityError, Summary: "a .yaml file holds Markdown front matter (--- … --- and a body); the runtime's YAML loader refuses it", Help: "Rename the file to .md (and its includes), or remove the --- lines and the Markdown body."},
	{Code: CodeUnreadable, Severity: diag.SeverityError, Summary: "a file could not be read (not a regular file, too large, or unreadable)", Help: "Make the path a readable regular file under the size limit."},

	{Code: CodeUnknownKey, Severity: diag.SeverityError, Summary: "a key the format does not define; the runtime ignores it without a word", Help: "Remove the key or correct its spelling: the message suggests the nearest known key."},
	{Code: CodeWrongType, Severity: diag.SeverityError, Summary: "a value has the wrong type (tools: as a mapping, context: as a list, …); the runtime crashes on it or ignores it", Help: "Give the value the shape the message shows, such as tools: [{module: tool-x, source: …}] or context: {include: [ns:path]}."},
	{Code: CodeMissingKey, Severity: diag.SeverityError, Summary: "a required key is missing", Help: "Add the key the message names."},
	{Code: CodeInvalidValue, Severity: diag.SeverityError, Summary: "a value has the right type but is not allowed", Help: "Use one of the values the message lists."},

	{Code: CodeIncludeNoBundleKey, Severity: diag.SeverityError, Summary: "an includes entry has no bundle: key (such as - behavior: …); the runtime skips it without a word", Help: "Write the entry as - bundle: SOURCE."},
	{Code: CodeIncludesUnderBundle, Severity: diag.SeverityError, Summary: "includes is written under bundle:, where the runtime never looks", Help: "Move includes: to the top level of the file, beside bundle:."},
	{Code: CodeAtInYAML, Severity: diag.SeverityError, Summary: "a YAML reference starts with @, which belongs to Markdown mentions; it resolves to nothing", Help: "Remove the @: write ns:path in YAML, @ns:path only in Markdown."},
	{Code: CodeModuleNoID, Severity: diag.SeverityError, Summary: "a providers, tools or hooks entry has no module (nor id); composition drops it", Help: "Add module: MODULE-ID to the entry."},
	{Code: CodeMissingName, Severity: diag.SeverityWarning, Summary: "a bundle has no bundle.name: it registers no namespace and its context keys collide", Help: "Add bundle: {name: …, version: …, description: …}."},
	{Code: CodeAgentNoMeta, Severity: diag.SeverityWarning, Summary: "an agent file has no meta: section (an error when it has no description either, so the agent is never chosen)", Help: "Put name and description under meta:, as meta: {name: x, description: …}."},
	{Code: CodeDefaultProvider, Severity: diag.SeverityError, Summary: "an amplifier-agent manifest has no top-level default_provider", Help: "Add default_provider: NAME at the top level of the manifest's front matter."},

	{Code: CodeIncludeUnresolved, Severity: diag.SeverityError, Summary: "an include resolves to no bundle; the runtime skips it (or drops the whole bundle that holds it) with a log line", Help: "Point the include at an existing bundle: ns:path of a loaded namespace, a file, or git+https://…@ref#subdirectory=path."},
	{Code: CodeIncludeNotCached, Severity: diag.SeverityWarning, Summary: "an include is a git URL whose checkout is not in the runtime's cache; it is not fetched, so it is not checked", Help: "Run the bundle once with amplifier (which clones it into $AMPLIFIER_HOME/cache), or map it to a local checkout in settings.yaml under sources.bundles."},
	{Code: CodeIncludeCycle, Severity: diag.SeverityError, Summary: "an include leads back to a bundle that is still loading; the runtime skips it", Help: "Break the cycle: remove the include the message names."},
	{Code: CodeIncludePartial, Severity: diag.SeverityWarning, Summary: "an included bundle is composed without its own includes, because an earlier ns:path include loaded its namespace bare", Help: "List - bundle: NAME before any NAME:path include of the same namespace."},
	{Code: CodeIncludeTooDeep, Severity: diag.SeverityError, Summary: "includes nest deeper (or load more bundles) than amplidex follows", Help: "Flatten the includes."},
	{Code: CodeComposeFails, Severity: diag.SeverityError, Summary: "the runtime crashes composing this bundle (a section of the wrong type); the bundle that includes it loses it", Help: "Give session and spawn mapping values, and providers, tools and hooks lists of mappings."},
	{Code: CodeAgentUnresolved, Severity: diag.SeverityError, Summary: "an agents.include name resolves to no agent file; the agent is never loaded", Help: "Write ns:name for an existing agents/name.md of that namespace, or add the file."},
	{Code: CodeContextUnresolved, Severity: diag.SeverityError, Summary: "a context path resolves to no file; it contributes nothing", Help: "Write ns:path of an existing file (relative to the namespace's root), or add the file."},
	{Code: CodeMentionUnresolved, Severity: diag.SeverityError, Summary: "an @ns:path mention names a file that does not exist; the runtime skips it", Help: "Correct the path (relative to the namespace's root), or add the file."},
	{Code: CodeMentionPunctuation, Severity: diag.SeverityError, Summary: "an @mention ends with . or :, which the runtime keeps as part of the path, so it resolves to nothing", Help: "Put a space (or wrap the mention in parentheses) before the punctuation, as the message shows."},
	{Code: CodeSettings, Severity: diag.SeverityError, Summary: "an Amplifier settings file (bundle.added, sources.bundles) is malformed", Help: "Fix the settings file: bundle.added and sources.bundles map names to URIs."},

	{Code: CodeDuplicateStep, Severity: diag.SeverityError, Summary: "two steps of a recipe have the same id", Help: "Give every step a unique id."},
	{Code: CodeUnknownStep, Severity: diag.SeverityError, Summary: "depends_on names a step the recipe does not have", Help: "Name the id of a step of the recipe."},
	{Code: CodeNameMismatch, Severity: diag.SeverityWarning, Summary: "a skill's name differs from its directory's name", Help: "Make name: match the directory, or rename the directory."},
}
